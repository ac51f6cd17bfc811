/**
 * Property: the datastore's grouped change reduction (samples/read-grouped-changes.ts, used by database-summaries,
 * top-queries over a window and query-stats) gives the pure pipeline's deltas and rates for every group and
 * bucket (the pipeline run on the connection's samples, each holding only the group's rows), on random statement histories: entities appearing and vanishing, marked and unmarked resets, nulls,
 * irregular spacing and gaps, several users per statement, windows that borrow a prior sample.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { fetchGroupedChanges } from "../../src/samples/read-grouped-changes.ts";
import { fetchSampleRows } from "../../src/samples/read-raw-rows.ts";
import { type Buckets, layoutBuckets } from "../../src/metrics/buckets.ts";
import { parseMetricList } from "../../src/metrics/metric-names.ts";
import { type Row, groupSamples } from "../../src/metrics/samples.ts";
import { borrowLimitMs, computeSeries } from "../../src/metrics/series.ts";
import { findProbe } from "../../src/probes/index.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { statementHistory } from "../support/statement-history.ts";

const probe = findProbe("pg_stat_statements")!;
const T0 = Date.parse("2026-05-01T00:00:00Z");
const SPACINGS = [300, 300, 300, 300, 150, 450, 600, 1, 3600, 7200];
const INTERVAL_S = 300;
const SEEDS = Array.from({ length: 12 }, (_, i) => i + 1);

const history = (seed: number) =>
  statementHistory(seed, { start: T0, samples: [25, 70], spacings: SPACINGS, churn: 0.12, reset: 0.05, drop: 0.04, missing: 0.04 });

/** The pipeline's answer per group: deltas of both columns and the calls rate, n + 1 points each. */
async function reference(store: TestDatastore, connectionId: number, b: Buckets, groupOf: (r: Row) => string) {
  const metrics = parseMetricList("calls_delta,total_exec_time_delta,calls_per_sec", probe);
  const rows = await fetchSampleRows(store.db, {
    probe,
    connectionIds: [connectionId],
    from: b.start - borrowLimitMs(b),
    to: b.end,
    columns: ["calls", "total_exec_time", "stats_reset"],
    filters: {},
  });
  // Each group sees every sample of the connection, holding only its own rows (possibly none).
  const samples = groupSamples(probe, rows);
  const groups = new Set(rows.map(groupOf));
  return new Map(
    [...groups].map((g) => [
      g,
      computeSeries({
        probe,
        metrics,
        samples: samples.map((x) => ({ t: x.t, rows: x.rows.filter((r) => groupOf(r) === g) })),
        buckets: b,
        intervalSeconds: INTERVAL_S,
        aggregation: "avg",
      }),
    ]),
  );
}

describe.each(DATASTORE_KINDS)("grouped changes on %s", (kind) => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore(kind);
  });
  afterAll(() => store.close());

  it.each(SEEDS)("seed %i: equals the pipeline for every group and bucket", async (seed) => {
    const connectionId = await addConnection(store.db, `seed-${seed}`);
    const rows = history(seed);
    await writeSamples(store.db, { connectionId, probe: probe.name, rows: rows as never });
    const last = Date.parse(rows[rows.length - 1].collected_at as string);
    const rng = seededRandom(seed * 7919);
    for (const [groupBy, groupOf] of [
      [["database_name"], (r: Row) => String(r.database_name)],
      [["queryid", "database_name"], (r: Row) => `${r.queryid}\u001f${r.database_name}`],
    ] as const) {
      const start = T0 + Math.floor(rng() * (last - T0) * 0.5);
      const b = layoutBuckets(start, last + Math.floor(rng() * 600_000), INTERVAL_S, 1 + Math.floor(rng() * 40));
      const expected = await reference(store, connectionId, b, groupOf);
      const actual = await fetchGroupedChanges(store.db, {
        probe,
        connectionId,
        columns: ["calls", "total_exec_time"],
        groupBy,
        buckets: b,
        intervalSeconds: INTERVAL_S,
        rates: true,
      });
      const sums = await fetchGroupedChanges(store.db, {
        probe,
        connectionId,
        columns: ["calls", "total_exec_time"],
        groupBy,
        buckets: b,
        intervalSeconds: INTERVAL_S,
      });
      const byKey = (list: typeof sums) => list.map((x) => [x.group.join("\u001f"), x.delta] as const).sort(([a], [b]) => a.localeCompare(b));
      expect(byKey(sums), "sums without rates").toEqual(byKey(actual)); // groups come in no particular order
      const byGroup = new Map(actual.map((a) => [a.group.join("\u001f"), a]));
      for (const [g, [calls, time, rate]] of expected) {
        const got = byGroup.get(g);
        for (let k = 0; k <= b.n; k++) {
          const where = `seed ${seed}, group ${g}, bucket ${k}`;
          expect(got?.delta[0].get(k) ?? 0, where).toBeCloseTo(calls[k] ?? 0, 6);
          expect(got?.delta[1].get(k) ?? 0, where).toBeCloseTo(time[k] ?? 0, 6);
          const r = got?.rate[0].get(k) ?? null;
          if (rate[k] === null) expect(r, where).toBeNull();
          else expect(r, where).toBeCloseTo(rate[k]!, 9);
        }
      }
      expect([...byGroup.keys()].every((g) => expected.has(g))).toBe(true);
    }
  });
});
