/**
 * The reads of probes/history-ddl.ts over raw and compressed hours: a window's samples (samplesSql), each group's
 * latest sample in a window (latestSampleTimesSql) and a connection's sample before an instant
 * (previousSampleTimeSql), and the latest sample of a connection with no raw rows (latestSampleTimeSql) agree with every row the probe's view returns, for windows that cut compressed hours
 * (between milliseconds too), fall in gaps, hold nothing or reach weeks beyond the samples.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findProbe } from "../../src/probes/index.ts";
import { latestSampleTimeSql, latestSampleTimesSql, previousSampleTimeSql, samplesSql } from "../../src/probes/history-ddl.ts";
import { compressChunk } from "../../src/samples/compress-history.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { seededRandom } from "../support/seeded-random.ts";

const probe = findProbe("pg_stat_all_tables")!;
const T0 = Date.parse("2026-05-01T00:00:00Z");
const MINUTE = 60_000;
const HOUR = 3_600_000;

describe.each(DATASTORE_KINDS)("sample-time lookups over raw and compressed hours (%s)", (kind) => {
  let store: TestDatastore;
  let id: number;
  const iso = (t: number) => new Date(t).toISOString();

  beforeAll(async () => {
    store = await migratedDatastore(kind);
    id = await addConnection(store.db, "lookups");
    // Database a every 7 minutes, b every 11 with no samples in its second hour, c only in the last hour (raw).
    const rows = [];
    for (let t = T0; t < T0 + 4 * HOUR; t += MINUTE) {
      const m = (t - T0) / MINUTE;
      const databases = [...(m % 7 === 0 ? ["a"] : []), ...(m % 11 === 0 && (m < 60 || m >= 120) ? ["b"] : []), ...(m % 5 === 0 && m >= 180 ? ["c"] : [])];
      for (const database_name of databases)
        for (const relname of ["t1", "t2"]) rows.push({ collected_at: iso(t), database_name, schemaname: "public", relname, n_live_tup: m, n_dead_tup: 1 });
    }
    await writeSamples(store.db, { connectionId: id, probe: probe.name, rows });
    for (let hour = 0; hour < 3; hour++) await compressChunk(store.db, probe, id, T0 + hour * HOUR);
  }, 60_000);
  afterAll(() => store.close());

  /** Windows from minute -30 to 270, ends on and off sample times and hour edges. */
  const windows = (() => {
    const random = seededRandom(5);
    const minute = () => Math.floor(random() * 300) - 30;
    const picked: Array<[number, number]> = [
      [0, 60],
      [60, 120],
      [61, 119],
      [15, 20],
      [-30, -1],
      [245, 270],
      [0, 240],
    ];
    while (picked.length < 40) {
      const [a, b] = [minute(), minute()];
      picked.push([Math.min(a, b), Math.max(a, b)]);
    }
    return picked.map(([a, b]) => [T0 + a * MINUTE, T0 + b * MINUTE + (a % 3) * 1000]);
  })();

  it("finds the compressed hours' rows it is checked against", async () => {
    const [{ raw, compressed }] = await store.db.query<{ raw: number; compressed: number }>(
      `SELECT (SELECT count(*) FROM metrics.pg_stat_all_tables__raw WHERE connection_id = $1)::int AS raw,
              (SELECT count(*) FROM metrics.pg_stat_all_tables__compressed WHERE connection_id = $1)::int AS compressed`,
      [id],
    );
    expect(raw).toBeGreaterThan(0);
    expect(compressed).toBe(2 * (3 + 2)); // per hour: a's two tables, and b's but in its empty hour
  });

  it("reads a window's samples, its ends included, as the view's rows in it", async () => {
    const micros = (t: number, us: number) => `${new Date(t).toISOString().slice(0, -1)}${String(us).padStart(3, "0")}Z`;
    const ranges: Array<[string, string]> = [
      ...windows.map(([from, to]): [string, string] => [iso(from), iso(to)]),
      // A sample at minute 7 (and 14): ends a microsecond either side of it.
      [micros(T0 + 7 * MINUTE - 1, 999), micros(T0 + 14 * MINUTE, 1)],
      [micros(T0 + 7 * MINUTE, 1), micros(T0 + 13 * MINUTE + 59_999, 999)],
      // Weeks before and after every sample (the offsets searched are an hour's milliseconds at most).
      [iso(T0 - 40 * 24 * HOUR), iso(T0 + 40 * 24 * HOUR)],
      [iso(T0 - 40 * 24 * HOUR), iso(T0 + 30 * MINUTE)],
    ];
    let read = 0;
    for (const [from, to] of ranges) {
      const rows = (sql: string, where: string) =>
        store.db.query(
          `SELECT round(date_part('epoch', collected_at) * 1000)::float8 AS at, database_name, relname, n_live_tup FROM ${sql} s
            WHERE connection_id = $1${where} ORDER BY 1, 2, 3`,
          [id, from, to],
        );
      const expected = await rows("metrics.pg_stat_all_tables", " AND collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz");
      // Nothing but the range's own conditions: it returns no row outside the range and leaves none out.
      const found = await rows(samplesSql(probe, "$2", "$3", ["n_live_tup"]), " AND $2::text IS NOT NULL AND $3::text IS NOT NULL");
      expect({ from, to, found }).toEqual({ from, to, found: expected });
      read += found.length;
    }
    expect(read).toBeGreaterThan(1000);
  });

  it("gives each group's latest sample in a window as the maximum over the view's rows", async () => {
    for (const [from, to] of windows) {
      const expected = await store.db.query(
        `SELECT database_name, round(date_part('epoch', max(collected_at)) * 1000)::float8 AS at FROM metrics.pg_stat_all_tables
          WHERE connection_id = $1 AND collected_at >= $2 AND collected_at <= $3 GROUP BY database_name ORDER BY database_name`,
        [id, iso(from), iso(to)],
      );
      const found = await store.db.query(
        `SELECT database_name, round(date_part('epoch', at) * 1000)::float8 AS at FROM ${latestSampleTimesSql(probe, "$1", "$2", "$3", ["database_name"])} l
          WHERE at IS NOT NULL ORDER BY database_name`,
        [id, iso(from), iso(to)],
      );
      expect({ window: [from - T0, to - T0].map((t) => t / MINUTE), found }).toEqual({ window: [from - T0, to - T0].map((t) => t / MINUTE), found: expected });
    }
  });

  it("finds the latest sample of a connection with no raw rows in its latest compressed hour, with or without a condition", async () => {
    const only = await addConnection(store.db, "compressed only");
    const rows = [];
    for (let m = 0; m < 120; m += 7)
      for (const [relname, live] of [
        ["t1", m],
        ["t2", 1000 + m],
      ] as const)
        rows.push({ collected_at: iso(T0 + m * MINUTE), database_name: "a", schemaname: "public", relname, n_live_tup: live, n_dead_tup: 0 });
    await writeSamples(store.db, { connectionId: only, probe: probe.name, rows });
    for (const hour of [0, 1]) await compressChunk(store.db, probe, only, T0 + hour * HOUR);
    const conditions: Array<[string, string[] | undefined]> = [
      ["TRUE", undefined],
      ["collected_at <= now()", []],
      ["relname = 't1'", []],
      ["n_live_tup < 100", undefined],
      ["n_live_tup >= 1000 AND n_live_tup < 1080", undefined],
    ];
    const found: unknown[] = [];
    for (const [where, columns] of conditions) {
      const [row] = await store.db.query(`SELECT round(date_part('epoch', ${latestSampleTimeSql(probe, "$1::int", where, columns)}) * 1000)::float8 AS at`, [
        only,
      ]);
      found.push([where, row.at === null ? null : (Number(row.at) - T0) / MINUTE]);
    }
    // Minute 119 is 7 * 17; the last t1 value under 100 is at minute 98, the last t2 under 1080 at 77.
    expect(found).toEqual([
      ["TRUE", 119],
      ["collected_at <= now()", 119],
      ["relname = 't1'", 119],
      ["n_live_tup < 100", 98],
      ["n_live_tup >= 1000 AND n_live_tup < 1080", 77],
    ]);
  });

  it("gives a connection's and a database's sample before an instant as the maximum over the view's rows", async () => {
    for (const [, before] of windows)
      for (const database of [undefined, "b"]) {
        const where = database ? " AND database_name = $3" : "";
        const params = [id, iso(before), ...(database ? [database] : [])];
        const [expected] = await store.db.query(
          `SELECT round(date_part('epoch', max(collected_at)) * 1000)::float8 AS at FROM metrics.pg_stat_all_tables WHERE connection_id = $1 AND collected_at < $2${where}`,
          params,
        );
        const [found] = await store.db.query(
          `SELECT round(date_part('epoch', ${previousSampleTimeSql(probe, "$1", "$2::timestamptz", database ? ["database_name = $3"] : [])}) * 1000)::float8 AS at`,
          params,
        );
        expect({ before: (before - T0) / MINUTE, database, found }).toEqual({ before: (before - T0) / MINUTE, database, found: expected });
      }
  });
});
