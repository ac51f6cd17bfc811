/**
 * A gauge over every entity (numbackends over every database) in buckets too narrow for the rollups, averaged or
 * summed, is read from the count and sum of its values the sample writer records with each sample's changes
 * (migration 33): a row a sample, and the connection's first sample (which has none) from its raw rows in the same
 * statement. Where those rows cannot tell every sample (rows written before migration 33), and for other
 * aggregations, the samples are reduced from raw rows. Every answer is the pipeline's on the raw rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { fetchSampleRows } from "../../src/samples/read-raw-rows.ts";
import type { Aggregation } from "../../src/metrics/aggregate.ts";
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
const READS_CHANGES = /FROM metrics\."pg_stat_database__changes"/;
const READS_RAW = /FROM metrics\."pg_stat_database__raw" WHERE collected_at >= \(\$2\)/; // a scan of the window (not a sample looked up)

/**
 * Six hours a minute apart of three databases: `c` absent for 20 minutes, `b` without a value now and then, and
 * the collector stopped for 15 minutes; written an hour at a time from the last hour back.
 */
function history(): Array<Record<string, unknown> & { collected_at: string }> {
  return Array.from({ length: 360 }, (_, i) => i)
    .filter((i) => i < 200 || i >= 215)
    .flatMap((i) => {
      const collected_at = new Date(T0 + i * MINUTE).toISOString();
      const rows = [
        { collected_at, database_name: "a", numbackends: (i * 7) % 11, xact_commit: i * 3, stats_reset: null },
        { collected_at, database_name: "b", numbackends: i % 5 === 0 ? null : (i * 3) % 13, xact_commit: i * 5, stats_reset: null },
      ];
      return i >= 100 && i < 120 ? rows : [...rows, { collected_at, database_name: "c", numbackends: i % 4, xact_commit: i, stats_reset: null }];
    });
}

describe("a gauge over every entity from the recorded changes", () => {
  let store: TestDatastore;
  let connectionId: number;
  let olderId: number;
  let brokenId: number;
  let singleId: number;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60");
    const rows = history();
    const write = async (id: number) => {
      for (let hour = 5; hour >= 0; hour--) {
        const batch = rows.filter((r) => Math.floor((Date.parse(r.collected_at) - T0) / 3_600_000) === hour);
        await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: batch });
      }
    };
    connectionId = await addConnection(store.db, "recorded");
    await write(connectionId);
    // The same history, its changes as written before migration 33 (no counts or sums of gauges).
    olderId = await addConnection(store.db, "older");
    await write(olderId);
    await store.db.query('UPDATE metrics.pg_stat_database__changes SET "numbackends:n" = NULL, "numbackends:sum" = NULL WHERE connection_id = $1', [olderId]);
    // The same history with one row of changes missing (as no writer leaves it), and a connection of one sample.
    brokenId = await addConnection(store.db, "broken");
    await write(brokenId);
    await store.db.query("DELETE FROM metrics.pg_stat_database__changes WHERE connection_id = $1 AND collected_at = $2", [
      brokenId,
      new Date(T0 + 150 * MINUTE).toISOString(),
    ]);
    singleId = await addConnection(store.db, "single");
    await writeSamples(store.db, {
      connectionId: singleId,
      probe: probe.name,
      rows: rows.filter((r) => r.collected_at === new Date(T0 + 150 * MINUTE).toISOString()),
    });
  });
  afterAll(() => store.close());

  async function answer(id: number, metrics: string, aggregation: Aggregation, window: { start: number; end: number }, buckets: number) {
    const statements: string[] = [];
    // The data statements (the connection's facts are read first, from the catalogue).
    const watched = {
      query: (sql: string, params?: readonly unknown[]) => (sql.includes("metrics.") && statements.push(sql), store.db.query(sql, params)),
    } as never;
    const result = await runMetricsQuery(watched, { probeName: probe.name, connectionIds: [id], window, buckets, metrics, aggregation });
    const layout = layoutBuckets(window.start, window.end, 60, buckets);
    const raw = await fetchSampleRows(store.db, {
      probe,
      connectionIds: [id],
      from: window.start - borrowLimitMs(layout),
      to: window.end,
      columns: ["numbackends", "xact_commit"],
      filters: {},
    });
    const expected = computeSeries({
      probe,
      metrics: parseMetricList(metrics, probe),
      samples: groupSamples(probe, raw),
      buckets: layout,
      intervalSeconds: 60,
      aggregation,
    });
    return { series: result.series.map((s) => s.data.map((p) => p.value)), expected, statements };
  }

  const inside = { start: T0 + 40 * MINUTE + 17_000, end: T0 + 330 * MINUTE + 41_000 };

  it.each(["avg", "sum"] as const)(
    "reads the %s of every database's values from the changes alone, one statement, as the pipeline computes it",
    async (aggregation) => {
      for (const buckets of [30, 97]) {
        const { series, expected, statements } = await answer(connectionId, "numbackends", aggregation, inside, buckets);
        expect(statements, statements.join("\n---\n")).toHaveLength(1);
        expect(statements[0]).toMatch(READS_CHANGES);
        expect(series).toEqual(expected);
        expect(series[0].filter((v) => v === null).length, "the stop leaves empty buckets").toBeGreaterThan(0);
      }
    },
  );

  it("reduces raw rows for the other aggregations, and for a raw counter beside the gauge", async () => {
    const max = await answer(connectionId, "numbackends", "max", inside, 30);
    expect(max.statements.some((s) => READS_RAW.test(s))).toBe(true);
    expect(max.series).toEqual(max.expected);
    const both = await answer(connectionId, "numbackends,xact_commit", "avg", inside, 30);
    expect(both.statements.some((s) => READS_CHANGES.test(s)) && both.statements.some((s) => READS_RAW.test(s))).toBe(true);
    expect(both.series).toEqual(both.expected);
  });

  it("reads the connection's first sample, which has no row of changes, from its raw rows in the same statement", async () => {
    for (const aggregation of ["avg", "sum"] as const) {
      const { series, expected, statements } = await answer(connectionId, "numbackends", aggregation, { start: T0 - 10 * MINUTE, end: T0 + 100 * MINUTE }, 40);
      expect(statements, statements.join("\n---\n")).toHaveLength(1);
      expect(statements[0]).toMatch(READS_CHANGES);
      expect(series).toEqual(expected);
      expect(series[0][3], "the first sample's bucket").toBe(expected[0][3]);
      expect(expected[0][3]).not.toBeNull();
    }
  });

  it.each([
    ["the changes were written before migration 33", () => olderId],
    ["a row of changes is missing", () => brokenId],
    ["the connection has one sample, its first", () => singleId],
  ])("reduces raw rows where %s", async (_, id) => {
    const { series, expected, statements } = await answer(id(), "numbackends", "avg", inside, 30);
    expect(statements.some((s) => READS_RAW.test(s))).toBe(true);
    expect(series).toEqual(expected);
    expect(series[0].some((v) => v !== null)).toBe(true);
  });

  it("records each sample's count and sum of values, missing databases and values left out", async () => {
    const at = async (minute: number) =>
      (
        await store.db.query<{ n: number; sum: number }>(
          'SELECT "numbackends:n" AS n, "numbackends:sum" AS sum FROM metrics.pg_stat_database__changes WHERE connection_id = $1 AND collected_at = $2',
          [connectionId, new Date(T0 + minute * MINUTE).toISOString()],
        )
      )[0];
    expect(await at(105)).toEqual({ n: 1, sum: (105 * 7) % 11 }); // c absent, b without a value
    expect(await at(101)).toEqual({ n: 2, sum: ((101 * 7) % 11) + ((101 * 3) % 13) });
    expect(await at(121)).toEqual({ n: 3, sum: ((121 * 7) % 11) + ((121 * 3) % 13) + (121 % 4) });
  });
});
