/**
 * A `database_name` filter's counter series averaged per bucket (and its deltas at any aggregation) is read by difference when the database is in
 * every sample read (its sample sequence is then the connection's), and from raw rows when it is not (it
 * vanished once); both answers equal the pure pipeline on the filtered raw rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { fetchSampleRows } from "../../src/samples/read-raw-rows.ts";
import { layoutBuckets } from "../../src/metrics/buckets.ts";
import { parseMetricList } from "../../src/metrics/metric-names.ts";
import { runGroupedMetricsQuery } from "../../src/queries/grouped-query.ts";
import { runMetricsQuery } from "../../src/queries/query.ts";
import { groupSamples } from "../../src/metrics/samples.ts";
import { borrowLimitMs, computeSeries } from "../../src/metrics/series.ts";
import { findProbe } from "../../src/probes/index.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const probe = findProbe("pg_stat_database")!;
const T0 = Date.parse("2026-06-01T00:00:00Z");
const MINUTE = 60_000;
const METRICS = "xact_commit_per_sec,xact_commit_delta,blk_read_time_pct";

describe("a filter naming a database in every sample", () => {
  let store: TestDatastore;
  let connectionId: number;
  let reversedId: number;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60");
    connectionId = await addConnection(store.db, "filtered");
    // 6 hours a minute apart; `steady` is always there (reset once), `flaky` misses one sample.
    const rows = Array.from({ length: 360 }, (_, i) => {
      const collected_at = new Date(T0 + i * MINUTE).toISOString();
      const steady = {
        collected_at,
        database_name: "steady",
        xact_commit: (i % 200) * 7 + ((i * i) % 5),
        blk_read_time: i * 30,
        stats_reset: i < 200 ? null : collected_at.slice(0, 10),
      };
      const flaky = { collected_at, database_name: "flaky", xact_commit: i * 3, blk_read_time: i * 10, stats_reset: null };
      return i === 150 ? [steady] : [steady, flaky];
    });
    for (let i = 0; i < rows.length; i += 60) await writeSamples(store.db, { connectionId, probe: probe.name, rows: rows.slice(i, i + 60).flat() });
    // The same history written an hour at a time from the last: its records lie out of time order in the datastore.
    reversedId = await addConnection(store.db, "filtered-reversed");
    for (let i = rows.length - 60; i >= 0; i -= 60)
      await writeSamples(store.db, { connectionId: reversedId, probe: probe.name, rows: rows.slice(i, i + 60).flat() });
  });
  afterAll(() => store.close());

  /** The request's answer, whether it read raw sample rows, and the pipeline's answer on the filtered raw rows. */
  async function answer(database: string, buckets: number, connection = connectionId, readsInStoredOrder = false) {
    const window = { start: T0 + 30 * MINUTE, end: T0 + 350 * MINUTE };
    const statements: string[] = [];
    // Without index scans, rows come back in the order they are stored unless a statement sorts them.
    const run = (sql: string, params?: readonly unknown[]) =>
      readsInStoredOrder
        ? store.db.transaction(async (tx) => {
            await tx.query("SET LOCAL enable_indexscan = off");
            await tx.query("SET LOCAL enable_bitmapscan = off");
            return tx.query(sql, params);
          })
        : store.db.query(sql, params);
    const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), run(sql, params)) } as never;
    const result = await runMetricsQuery(watched, {
      probeName: probe.name,
      connectionIds: [connection],
      window,
      buckets,
      metrics: METRICS,
      filters: { database_name: database },
    });
    const layout = layoutBuckets(window.start, window.end, 60, buckets);
    const columns = ["xact_commit", "blk_read_time", "stats_reset"];
    const raw = await fetchSampleRows(store.db, {
      probe,
      connectionIds: [connection],
      from: window.start - borrowLimitMs(layout),
      to: window.end,
      columns,
      filters: { database_name: database },
    });
    const expected = computeSeries({
      probe,
      metrics: parseMetricList(METRICS, probe),
      samples: groupSamples(probe, raw),
      buckets: layout,
      intervalSeconds: 60,
      aggregation: "avg",
    });
    const readRaw = statements.some((sql) => /FROM metrics\."pg_stat_database__raw" WHERE collected_at >= \(\$2\)/.test(sql));
    return { series: result.series.map((s) => s.data.map((p) => p.value)), readRaw, expected, statements };
  }

  /** Rates summed in another order differ in the last bits. */
  const rounded = (actual: Array<Array<number | null>>, expected: Array<Array<number | null>>) =>
    actual.map((values, i) =>
      values.map((v, k) =>
        typeof v === "number" && typeof expected[i][k] === "number" && Math.abs(v - expected[i][k]!) <= 1e-9 * Math.max(1, Math.abs(v)) ? expected[i][k] : v,
      ),
    );

  it.each([7, 40])("is read by difference, as the pipeline reads it (%i buckets)", async (buckets) => {
    const { series, readRaw, expected } = await answer("steady", buckets);
    expect(readRaw).toBe(false);
    expect(rounded(series, expected)).toEqual(expected);
    expect(series[0].some((v) => v !== null && v > 0)).toBe(true);
  });

  it("reads a delta at its maximum by difference too, filtered and grouped: a bucket's delta is its summed changes at any aggregation", async () => {
    const window = { start: T0 + 30 * MINUTE, end: T0 + 350 * MINUTE };
    const statements: string[] = [];
    const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;
    const query = { probeName: probe.name, connectionIds: [connectionId], window, buckets: 7, metrics: "xact_commit_delta", aggregation: "max" };
    const layout = layoutBuckets(window.start, window.end, 60, 7);
    const raw = await fetchSampleRows(store.db, {
      probe,
      connectionIds: [connectionId],
      from: window.start - borrowLimitMs(layout),
      to: window.end,
      columns: ["xact_commit", "stats_reset"],
      filters: { database_name: "steady" },
    });
    const expected = computeSeries({
      probe,
      metrics: parseMetricList("xact_commit_delta", probe),
      samples: groupSamples(probe, raw),
      buckets: layout,
      intervalSeconds: 60,
      aggregation: "max",
    });
    const filtered = await runMetricsQuery(watched, { ...query, filters: { database_name: "steady" } });
    expect(filtered.series.map((x) => x.data.map((p) => p.value))).toEqual(expected);
    const grouped = await runGroupedMetricsQuery(watched, { ...query, groupBy: "database_name" });
    const reference = await runGroupedMetricsQuery(store.db, { ...query, groupBy: "database_name" }, "pipeline");
    expect(grouped.map((x) => [x.entity, x.data.map((p) => p.value)])).toEqual(reference.map((x) => [x.entity, x.data.map((p) => p.value)]));
    expect(grouped.find((x) => x.entity.database_name === "steady")!.data.map((p) => p.value)).toEqual(expected[0]);
    // Neither read raw rows or the entity cells: only the spacing facts with the rows at run ends.
    expect(statements.some((sql) => /FROM metrics\."pg_stat_database__raw" WHERE collected_at >= \(\$2\)|entity_cells/.test(sql))).toBe(false);
  });

  it("is read from raw rows alone, in one statement, over many buckets about two intervals wide", async () => {
    const { series, readRaw, expected, statements } = await answer("steady", 150);
    expect(readRaw).toBe(true);
    expect(statements, statements.join("\n")).toHaveLength(2); // the connection's context, then the rows
    expect(rounded(series, expected)).toEqual(expected);
  });

  it("is read by difference from a history written out of time order, as the pipeline reads it", async () => {
    const { series, readRaw, expected } = await answer("steady", 40, reversedId, true);
    expect(readRaw).toBe(false);
    expect(rounded(series, expected)).toEqual(expected);
  });

  it("is read from raw rows when the database missed a sample, as the pipeline reads it", async () => {
    const { series, readRaw, expected } = await answer("flaky", 40);
    expect(rounded(series, expected)).toEqual(expected);
    expect(readRaw).toBe(true);
  });
});
