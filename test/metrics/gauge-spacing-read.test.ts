/**
 * A gauge of one database (a `database_name` filter) or of each (`group_by=database_name`) over buckets too narrow
 * for the hourly cells is reduced per bucket in the datastore, in the statement that also reads the spacing the
 * pipeline judges repeats into empty buckets by (the larger of the collection interval and the median spacing):
 * of the database's own samples where filtered, of the connection's where grouped. The window ends 4 minutes after
 * the last sample, where judging by 60 s leaves the last point empty and by 90 s or more repeats the value; each
 * answer equals the pipeline's.
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
const MINUTE = 60_000;
const T0 = Date.parse("2026-06-01T00:00:00Z");
const LAST = 209; // the last sample, minute 209
// From the first sample after minute 34 to 4 minutes after the last, in 20 buckets of about 9 samples.
const WINDOW = { start: T0 + 34.5 * MINUTE, end: T0 + LAST * MINUTE + 4 * MINUTE };
const BUCKETS = 20;

/** Which samples (minute j) each database is in. */
const PRESENT: Record<string, (j: number) => boolean> = {
  every: () => true,
  // Missed once: one interval of two minutes among 170 of one.
  missedOnce: (j) => j !== 100,
  // In the window, alternately two and one minutes apart, as many of each: the median is 90 s (the interval of one
  // minute from the sample before the window does not count).
  halfLonger: (j) => j % 3 !== 0,
  // Every other sample: every interval two minutes.
  everyOther: (j) => j % 2 === 1,
};

/** Sample rows every minute up to LAST of the databases present then. */
const history = (databases: Array<[string, (j: number) => boolean]>) =>
  Array.from({ length: LAST + 1 }, (_, j) =>
    databases
      .filter(([, present]) => present(j))
      .map(([database_name], d) => ({
        collected_at: new Date(T0 + j * MINUTE).toISOString(),
        database_name,
        numbackends: (j * 7 + d) % 11,
        xact_commit: j,
        stats_reset: null,
      })),
  ).flat();

describe("a filter's gauge in buckets of several samples", () => {
  let store: TestDatastore;
  let connectionId: number;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60");
    connectionId = await addConnection(store.db, "gauges");
    await writeSamples(store.db, { connectionId, probe: probe.name, rows: history(Object.entries(PRESENT)) });
  });
  afterAll(() => store.close());

  async function answer(database: string) {
    const statements: string[] = [];
    const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;
    const result = await runMetricsQuery(watched, {
      probeName: probe.name,
      connectionIds: [connectionId],
      window: WINDOW,
      buckets: BUCKETS,
      metrics: "numbackends",
      filters: { database_name: database },
    });
    const layout = layoutBuckets(WINDOW.start, WINDOW.end, 60, BUCKETS);
    const raw = await fetchSampleRows(store.db, {
      probe,
      connectionIds: [connectionId],
      from: WINDOW.start - borrowLimitMs(layout),
      to: WINDOW.end,
      columns: ["numbackends"],
      filters: { database_name: database },
    });
    const expected = computeSeries({
      probe,
      metrics: parseMetricList("numbackends", probe),
      samples: groupSamples(probe, raw),
      buckets: layout,
      intervalSeconds: 60,
      aggregation: "avg",
    });
    return { values: result.series[0].data.map((p) => p.value), expected: expected[0], statements };
  }

  it.each([
    ["every", "in every sample: judged by the longest interval, 60 s", null],
    ["missedOnce", "missed once: fewer than half of its intervals are longer than 60 s, so is the median", null],
  ])("answers in one statement after the context for a database %s (%s)", async (database, _why, last) => {
    const { values, expected, statements } = await answer(database);
    expect(values).toEqual(expected);
    expect(values.at(-1)).toBe(last);
    expect(values.slice(0, -1).every((v) => typeof v === "number")).toBe(true);
    expect(statements, statements.join("\n")).toHaveLength(2);
  });

  it.each([
    ["halfLonger", "as many intervals of one and two minutes: judged by their median, 90 s"],
    ["everyOther", "every interval two minutes: judged by 120 s"],
  ])("repeats the last value into the window's end for a database %s (%s), as the pipeline does", async (database) => {
    const { values, expected } = await answer(database);
    expect(values).toEqual(expected);
    expect(values.at(-1)).toBe(values.at(-2));
  });
});

describe("every database's gauge in buckets of several samples", () => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60");
  });
  afterAll(() => store.close());

  /** The grouped answer over a connection whose samples are those `present` says, two databases in each, and the pipeline's. */
  async function grouped(name: string, present: (j: number) => boolean) {
    const connectionId = await addConnection(store.db, name);
    await writeSamples(store.db, {
      connectionId,
      probe: probe.name,
      rows: history([
        ["a", present],
        ["b", present],
      ]),
    });
    const statements: string[] = [];
    const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;
    const query = { probeName: probe.name, connectionIds: [connectionId], window: WINDOW, buckets: BUCKETS, metrics: "numbackends", groupBy: "database_name" };
    const values = (await runGroupedMetricsQuery(watched, query)).map((x) => x.data.map((p) => p.value));
    const expected = (await runGroupedMetricsQuery(store.db, query, "pipeline")).map((x) => x.data.map((p) => p.value));
    return { values, expected, statements };
  }

  it("answers in one statement after the context where the connection missed a sample once (judged by 60 s)", async () => {
    const { values, expected, statements } = await grouped("missed once", PRESENT.missedOnce);
    expect(values).toEqual(expected);
    expect(values.map((v) => v.at(-1))).toEqual([null, null]);
    expect(statements, statements.join("\n")).toHaveLength(2);
  });

  it("repeats the last values into the window's end where the connection's samples are as often two minutes apart as one (judged by 90 s)", async () => {
    const { values, expected } = await grouped("half longer", PRESENT.halfLonger);
    expect(values).toEqual(expected);
    expect(values.every((v) => v.at(-1) === v.at(-2))).toBe(true);
  });
});
