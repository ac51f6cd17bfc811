/**
 * The spaced read (one statement reading a filtered counter by difference) lists the few changes of another length
 * than the collection interval by looking only into the hours whose change cells show one: a cell's longest
 * interval for a missed round or a late one, its shortest (migration 32) for an extra sample between two rounds,
 * and every hour whose cell was written before the shortest was kept. Each answer is the pipeline's on the
 * filtered raw rows, read without the raw scan.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { fetchSampleRows } from "../../src/samples/read-raw-rows.ts";
import { layoutBuckets } from "../../src/metrics/buckets.ts";
import { parseMetricList } from "../../src/metrics/metric-names.ts";
import { runMetricsQuery } from "../../src/queries/query.ts";
import { groupSamples } from "../../src/metrics/samples.ts";
import { borrowLimitMs, computeSeries } from "../../src/metrics/series.ts";
import { findProbe } from "../../src/probes/index.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const probe = findProbe("pg_stat_database")!;
const T0 = Date.parse("2026-06-01T00:00:00Z");
const MINUTE = 60_000;
const METRIC = "xact_commit_per_sec";
const WINDOW = { start: T0 + 30 * MINUTE + 13_000, end: T0 + 470 * MINUTE + 29_000 };

/** Two databases a minute apart for eight hours, the rounds given by `times` (minutes from T0 may be fractional). */
async function history(store: TestDatastore, name: string, minutes: readonly number[]): Promise<number> {
  const id = await addConnection(store.db, name);
  const rows = minutes.flatMap((m, i) => {
    const collected_at = new Date(T0 + m * MINUTE).toISOString();
    return ["a", "b"].map((d, j) => ({ collected_at, database_name: d, xact_commit: i * (j + 3) + ((i * i) % 7), stats_reset: null }));
  });
  for (let i = 0; i < rows.length; i += 200) await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: rows.slice(i, i + 200) });
  return id;
}

const everyMinute = Array.from({ length: 480 }, (_, j) => j);

describe("the changes of another length, found through the change cells", () => {
  let store: TestDatastore;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60");
    // A missed round in the third hour and one 5 s late in the fifth: the cells' longest intervals show them. And a
    // missed round in the window's last hour, which is not whole: found among its changes themselves.
    ids.longer = await history(
      store,
      "longer",
      everyMinute.filter((j) => j !== 130 && j !== 445).map((j) => (j === 250 ? j + 5 / 60 : j)),
    );
    // An extra round half-way in the fourth hour: two 30 s intervals, none longer; only the cell's shortest shows it.
    ids.shorter = await history(
      store,
      "shorter",
      [...everyMinute, 200.5].sort((a, b) => a - b),
    );
    // The same, its cells as written before migration 32 (no shortest).
    ids.unknown = await history(
      store,
      "unknown",
      [...everyMinute, 200.5].sort((a, b) => a - b),
    );
    await store.db.query("UPDATE metrics.pg_stat_database__change_cells SET min_span_ms = NULL WHERE connection_id = $1", [ids.unknown]);
  });
  afterAll(() => store.close());

  async function answer(connectionId: number, buckets: number) {
    const statements: string[] = [];
    // The data statements (the connection's facts are read first, from the catalogue).
    const watched = {
      query: (sql: string, params?: readonly unknown[]) => (sql.includes("metrics.") && statements.push(sql), store.db.query(sql, params)),
    } as never;
    const result = await runMetricsQuery(watched, {
      probeName: probe.name,
      connectionIds: [connectionId],
      window: WINDOW,
      buckets,
      metrics: METRIC,
      filters: { database_name: "a" },
    });
    const layout = layoutBuckets(WINDOW.start, WINDOW.end, 60, buckets);
    const raw = await fetchSampleRows(store.db, {
      probe,
      connectionIds: [connectionId],
      from: WINDOW.start - borrowLimitMs(layout),
      to: WINDOW.end,
      columns: ["xact_commit", "stats_reset"],
      filters: { database_name: "a" },
    });
    const [expected] = computeSeries({
      probe,
      metrics: parseMetricList(METRIC, probe),
      samples: groupSamples(probe, raw),
      buckets: layout,
      intervalSeconds: 60,
      aggregation: "avg",
    });
    return { series: result.series[0].data.map((p) => p.value), expected, statements };
  }

  /** Rates summed in another order differ in the last bits. */
  const close = (actual: Array<number | null>, expected: Array<number | null>) =>
    actual.map((v, k) =>
      typeof v === "number" && typeof expected[k] === "number" && Math.abs(v - expected[k]!) <= 1e-9 * Math.max(1, Math.abs(v)) ? expected[k] : v,
    );

  it.each(["longer", "shorter", "unknown"])("reads the %s history by difference in one statement, as the pipeline reads it", async (name) => {
    for (const buckets of [7, 20]) {
      const { series, expected, statements } = await answer(ids[name], buckets);
      expect(statements, statements.join("\n---\n")).toHaveLength(1);
      expect(statements[0]).not.toMatch(/FROM metrics\."pg_stat_database__raw" WHERE collected_at >= \(\$2\)/); // no scan of the raw rows
      expect(close(series, expected)).toEqual(expected);
      expect(series.filter((v) => v !== null).length).toBeGreaterThan(buckets / 2);
    }
  });

  it("keeps each cell's shortest interval, and none in cells written before", async () => {
    const shortest = async (id: number) =>
      (
        await store.db.query<{ ms: number | null }>(
          "SELECT min_span_ms AS ms FROM metrics.pg_stat_database__change_cells WHERE connection_id = $1 AND level_seconds = 3600 AND cell_start = $2",
          [id, new Date(T0 + 3 * 60 * MINUTE).toISOString()],
        )
      )[0].ms;
    expect(await shortest(ids.shorter)).toBe(30_000);
    expect(await shortest(ids.longer)).toBe(60_000);
    expect(await shortest(ids.unknown)).toBeNull();
  });
});
