/**
 * The sample writer records each interval's changes and each entity's irregular intervals, for a batch of many
 * samples in the writer (samples/record-changes.ts) and for a one-sample batch in the datastore
 * (samples/record-sample-changes.ts); the pure definitions (metrics/intervals.ts, metrics/irregular-intervals.ts)
 * are the reference. Random histories
 * (entities appearing and vanishing, marked and unmarked resets, nulls, irregular spacing, a loopback interface no
 * query may see, a single-entity probe with a numeric counter) are written in shuffled batches and appended one
 * sample at a time, as a collector does; the recorded tables must hold exactly what the reference computes from
 * every row.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { intervalsForColumns } from "../../src/metrics/intervals.ts";
import { irregularIntervals } from "../../src/metrics/irregular-intervals.ts";
import { type Row, groupSamples } from "../../src/metrics/samples.ts";
import { changesTableName, cumulativeColumns, factColumn, irregularTableName, probeTable, quoteIdent, recordedGaugeColumns } from "../../src/probes/ddl.ts";
import { findProbe } from "../../src/probes/index.ts";
import type { ProbeDefinition } from "../../src/probes/types.ts";
import { DATASTORE_KINDS, type TestDatastore, addConnection, migratedDatastore } from "../support/datastore.ts";
import { T0, history, random, writeShuffled } from "../support/random-history.ts";
import { statementHistory } from "../support/statement-history.ts";

const SEEDS = [1, 2, 3, 4, 5, 6];

/** pg_stat_wal: one row per sample, a numeric counter, a reset marker, nulls, drops. */
function walHistory(seed: number): Row[] {
  const rng = random(seed);
  const rows: Row[] = [];
  let t = T0;
  let records = 1000;
  let bytes = 5e9;
  let reset: string | null = null;
  for (let s = 0; s < rng.int(20, 50); s++) {
    const roll = rng.next();
    if (roll < 0.06) [records, bytes, reset] = [rng.int(0, 50), rng.int(0, 5000), new Date(t - 1000).toISOString()];
    else if (roll < 0.1)
      records = rng.int(0, 50); // unmarked drop
    else [records, bytes] = [records + rng.int(0, 900), bytes + rng.int(0, 4000) / 4];
    rows.push({ collected_at: new Date(t).toISOString(), wal_records: rng.next() < 0.05 ? null : records, wal_bytes: String(bytes), stats_reset: reset });
    t += rng.pick([60, 60, 600, 1, 3600]) * 1000;
  }
  return rows;
}

const CASES: Array<{ probe: string; rows: (seed: number) => Row[] }> = [
  {
    probe: "pg_stat_statements",
    rows: (seed) =>
      statementHistory(seed, { start: T0, samples: [20, 50], spacings: [300, 300, 150, 1, 3600], churn: 0.1, reset: 0.04, drop: 0.04, missing: 0.05 }),
  },
  {
    probe: "pg_sys_network_info",
    rows: (seed) => {
      const rng = random(seed);
      const rows = history(rng, {
        probe: "pg_sys_network_info",
        key: "interface_name",
        entities: ["eth0", "eth1", "lo"],
        columns: { rx_bytes: "int", tx_bytes: "int" },
        metrics: [],
      });
      // A recorded gauge (whole numbers), sometimes unknown.
      return rows.map((r) => ({ ...r, link_speed_mbps: rng.next() < 0.3 ? null : rng.pick([100, 1000, 10000]) }));
    },
  },
  { probe: "pg_stat_wal", rows: walHistory },
];

/** Numbers equal up to summing in another order; nulls equal only nulls. */
const same = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)));

async function recorded(store: TestDatastore, probe: ProbeDefinition, connectionId: number) {
  const columns = cumulativeColumns(probe).map((c) => quoteIdent(c.name));
  const gauges = recordedGaugeColumns(probe).flatMap((c) => [factColumn(c.name, "n"), factColumn(c.name, "sum")]);
  const changes = await store.db.query<Record<string, number | boolean | null>>(
    `SELECT round(date_part('epoch', collected_at) * 1000)::float8 AS t, round(date_part('epoch', prev_collected_at) * 1000)::float8 AS prev,
            ${[...columns, ...gauges, ...(probe.keys.length ? ["entities_checked"] : [])].join(", ")}
       FROM ${probeTable(changesTableName(probe.name))} WHERE connection_id = $1 ORDER BY collected_at`,
    [connectionId],
  );
  const irregular = probe.keys.length
    ? await store.db.query<Record<string, string | number | null>>(
        `SELECT round(date_part('epoch', collected_at) * 1000)::float8 AS t, ${probe.keys.map((k) => `${quoteIdent(k)}::text AS ${quoteIdent(k)}`).join(", ")}, ${columns.join(", ")}
           FROM ${probeTable(irregularTableName(probe.name))} WHERE connection_id = $1`,
        [connectionId],
      )
    : [];
  return { changes, irregular };
}

function expectReference(probe: ProbeDefinition, rows: readonly Row[], got: Awaited<ReturnType<typeof recorded>>, where: string) {
  const columns = cumulativeColumns(probe);
  const samples = groupSamples(
    probe,
    [...rows].sort((a, b) => Date.parse(a.collected_at as string) - Date.parse(b.collected_at as string)),
  );
  const intervals = intervalsForColumns(
    probe,
    columns.map((c) => c.name),
    samples,
  );
  expect(
    got.changes.map((c) => [c.t, c.prev]),
    `${where}: one changes row per interval`,
  ).toEqual(intervals[0].map((iv) => [iv.to, iv.from]));
  const rowsAt = new Map(samples.map((s) => [s.t, s.rows]));
  got.changes.forEach((c, i) => {
    columns.forEach((col, k) => {
      expect(
        same(c[col.name] as number | null, intervals[k][i].change),
        `${where}: ${col.name} at ${new Date(c.t as number).toISOString()}: ${c[col.name]} vs ${intervals[k][i].change}`,
      ).toBe(true);
    });
    for (const gauge of recordedGaugeColumns(probe)) {
      const values = rowsAt
        .get(c.t as number)!
        .map((r) => r[gauge.name])
        .filter((v) => v !== null && v !== undefined);
      const fact = (f: "n" | "sum") => c[factColumn(gauge.name, f).replaceAll('"', "")];
      expect([fact("n"), fact("sum")], `${where}: ${gauge.name}'s count and sum`).toEqual([values.length, values.reduce<number>((s, v) => s + Number(v), 0)]);
    }
    if (probe.keys.length) expect(c.entities_checked, where).toBe(true);
  });
  if (!probe.keys.length) return;
  const key = (t: number, entity: Row) => `${t} ${probe.keys.map((k) => String(entity[k])).join("/")}`;
  const expected = new Map(irregularIntervals(probe, columns, samples).map((x) => [key(x.to, x.entity), x.changes]));
  const actual = new Map(got.irregular.map((x) => [key(x.t as number, x), columns.map((c) => x[c.name] as number | null)]));
  expect([...actual.keys()].sort(), `${where}: the irregular intervals`).toEqual([...expected.keys()].sort());
  for (const [k, changes] of expected) {
    const found = actual.get(k)!;
    changes.forEach((change, c) => expect(same(found[c], change), `${where}: irregular ${k} ${columns[c].name}: ${found[c]} vs ${change}`).toBe(true));
  }
}

describe.each(DATASTORE_KINDS)("recorded changes and irregular intervals (%s)", (kind) => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore(kind);
  });
  afterAll(() => store.close());

  for (const { probe: name, rows: rowsOf } of CASES)
    it.each(SEEDS)(`${name}: equal the reference, written in shuffled batches and appended a sample at a time, seed %i`, async (seed) => {
      const probe = findProbe(name)!;
      const rows = rowsOf(seed) as Array<Record<string, unknown>>;
      const shuffled = await addConnection(store.db, `${name}-shuffled-${seed}`);
      await writeShuffled(store, random(seed), shuffled, name, rows, 6);
      expectReference(probe, rows, await recorded(store, probe, shuffled), `${name} seed ${seed}, shuffled`);
      const appended = await addConnection(store.db, `${name}-appended-${seed}`);
      await writeShuffled(store, random(seed), appended, name, rows, 1, true);
      expectReference(probe, rows, await recorded(store, probe, appended), `${name} seed ${seed}, appended`);
    });
});
