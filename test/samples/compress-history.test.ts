/**
 * Compressed history (samples/compress-history.ts): after closed hours are compressed, `metrics.<probe>` returns the
 * same rows and every metrics read (summed, grouped, filtered, per-entity extremes; windows inside the compressed
 * days, inside the raw ones and across the boundary) the same answers as before, on random statement histories
 * with entities appearing and vanishing, resets, nulls and gaps. Compression is idempotent, a write into a
 * compressed hour is checked and derived as if it had stayed raw, and compression interrupted loses nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { openNeonHttp } from "../../drivers/neon.ts";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { dropExpiredPartitions } from "../../src/collector/retention.ts";
import { findProbe } from "../../src/probes/index.ts";
import { runGroupedMetricsQuery } from "../../src/queries/grouped-query.ts";
import { runMetricsQuery } from "../../src/queries/query.ts";
import { type CompressionRound, compressClosedChunks, compressChunk, KEEP_RAW_MS } from "../../src/samples/compress-history.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { statementHistory } from "../support/statement-history.ts";
import { type NeonProxy, startNeonProxy } from "../neon-proxy.ts";

const probe = findProbe("pg_stat_statements")!;
const T0 = Date.parse("2026-05-01T00:00:00Z");
const DAY = 86_400_000;
const HOUR = 3_600_000;

/** About three days (a day with 40-50 samples): half-hour spacing with longer gaps now and then. */
const history = (seed: number, samples: [number, number] = [140, 160]) =>
  statementHistory(seed, {
    start: T0,
    samples,
    spacings: [1800, 1800, 1800, 900, 2700, 3600, 14_400],
    churn: 0.03,
    reset: 0.03,
    drop: 0.02,
    missing: 0.03,
  });

/** Windows inside day one (compressed), across the boundary into raw day three, and over everything. */
const WINDOWS = [
  { start: T0 + 2 * HOUR, end: T0 + 20 * HOUR },
  { start: T0 + 30 * HOUR, end: T0 + 60 * HOUR },
  { start: T0, end: T0 + 4 * DAY },
];

async function answers(db: TestDatastore["db"], connectionId: number) {
  const out: unknown[] = [];
  for (const window of WINDOWS) {
    const base = { probeName: probe.name, connectionIds: [connectionId], window, buckets: 12 };
    out.push((await runMetricsQuery(db, { ...base, metrics: "calls_per_sec,calls_delta,total_exec_time_pct,calls" })).series.map((s) => s.data));
    out.push((await runMetricsQuery(db, { ...base, metrics: "calls", aggregation: "max" })).series.map((s) => s.data));
    out.push((await runMetricsQuery(db, { ...base, metrics: "calls_delta", filters: { database_name: "shop" } })).series.map((s) => s.data));
    for (const aggregation of ["avg", "max"] as const)
      out.push(
        (await runGroupedMetricsQuery(db, { ...base, metrics: "calls_per_sec,calls", groupBy: "database_name", aggregation })).map((s) => [s.entity, s.data]),
      );
  }
  return rounded(out);
}

/** Sums taken in another order differ in the last bits. */
const rounded = (value: unknown): unknown =>
  typeof value === "number"
    ? Number(value.toPrecision(12))
    : Array.isArray(value)
      ? value.map(rounded)
      : value && typeof value === "object"
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v)]))
        : value;

const viewRows = (db: TestDatastore["db"], connectionId: number) =>
  db.query(
    `SELECT collected_at, database_name, queryid::text, userid, calls, total_exec_time, stats_reset FROM metrics.pg_stat_statements
      WHERE connection_id = $1 ORDER BY collected_at, database_name, queryid, userid`,
    [connectionId],
  );

const counts = async (db: TestDatastore["db"], connectionId: number) =>
  (
    await db.query<{ raw: number; compressed: number }>(
      `SELECT (SELECT count(*) FROM metrics.pg_stat_statements__raw WHERE connection_id = $1)::int AS raw,
              (SELECT coalesce(sum(samples), 0) FROM metrics.pg_stat_statements__compressed WHERE connection_id = $1)::int AS compressed`,
      [connectionId],
    )
  )[0];

describe.each(DATASTORE_KINDS)("compressed history (%s)", (kind) => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore(kind);
  });
  afterAll(() => store.close());

  it.each([1, 2, 3])("returns the same rows and answers once closed hours are compressed (seed %i)", async (seed) => {
    const id = await addConnection(store.db, `seed-${seed}`);
    const rows = history(seed);
    await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: rows as never });
    const [rowsBefore, answersBefore] = [await viewRows(store.db, id), await answers(store.db, id)];
    // The hours of days one and two close; day three (and any later) stays raw.
    const round = await compressClosedChunks(store.db, T0 + 2 * DAY + KEEP_RAW_MS + 1);
    const closed = rows.map((r) => Date.parse(r.collected_at as string)).filter((t) => t < T0 + 2 * DAY);
    expect(round.chunks).toBe(new Set(closed.map((t) => Math.floor(t / HOUR))).size);
    const { raw, compressed } = await counts(store.db, id);
    expect(compressed).toBe(closed.length);
    expect(raw + compressed).toBe(rows.length);
    expect(await viewRows(store.db, id)).toEqual(rowsBefore);
    expect(await answers(store.db, id)).toEqual(answersBefore);
    // Again: nothing left to do, nothing changed.
    expect((await compressClosedChunks(store.db, T0 + 2 * DAY + KEEP_RAW_MS + 1)).chunks).toBe(0);
    expect(await counts(store.db, id)).toEqual({ raw, compressed });
  });

  it("answers the same when hours are compressed between the statements of one request", async () => {
    const id = await addConnection(store.db, "mid-request");
    await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: history(6) as never });
    const before = await answers(store.db, id);
    let compressed: CompressionRound | undefined;
    const interleaved = {
      query: async (sql: string, params?: readonly unknown[], options?: never) => {
        const result = await store.db.query(sql, params, options);
        compressed ??= await compressClosedChunks(store.db, Date.now()); // after the first statement
        return result;
      },
    } as never;
    expect(await answers(interleaved, id)).toEqual(before);
    expect(compressed!.rows).toBeGreaterThan(0);
  });

  it("answers reads by difference, which look samples up at single instants, the same once their hours are compressed", async () => {
    const id = await addConnection(store.db, "even");
    // Three databases every 5 minutes for three days, one of them reset on day two: changes read by difference.
    const rows = Array.from({ length: 3 * 288 }, (_, j) =>
      ["a", "b", "c"].map((d, i) => ({
        collected_at: new Date(T0 + j * 300_000).toISOString(),
        database_name: d,
        xact_commit: d === "b" && j >= 400 ? (j - 400) ** 2 : Math.floor((j * j) / 7) * (i + 1), // growing faster and faster: each instant's value counts
        stats_reset: d === "b" && j >= 400 ? new Date(T0 + 400 * 300_000 - 1000).toISOString() : null,
        numbackends: (j + i) % 5,
      })),
    ).flat();
    await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows });
    const statements: string[] = [];
    const watched = { query: (sql: string, params?: readonly unknown[], o?: never) => (statements.push(sql), store.db.query(sql, params, o)) } as never;
    const read = async () => {
      const out: unknown[] = [];
      for (const window of WINDOWS) {
        const base = { probeName: "pg_stat_database", connectionIds: [id], window, buckets: 12 };
        out.push((await runMetricsQuery(watched, { ...base, metrics: "xact_commit_per_sec,xact_commit_delta" })).series.map((s) => s.data));
        out.push((await runMetricsQuery(watched, { ...base, metrics: "xact_commit_delta", filters: { database_name: "b" } })).series.map((s) => s.data));
        out.push((await runGroupedMetricsQuery(watched, { ...base, metrics: "xact_commit_per_sec", groupBy: "database_name" })).map((s) => [s.entity, s.data]));
      }
      return rounded(out);
    };
    const before = await read();
    await compressClosedChunks(store.db, T0 + 2 * DAY + KEEP_RAW_MS + 1);
    statements.length = 0;
    expect(await read()).toEqual(before);
    expect(
      statements.some((sql) => sql.includes("array_position(hc.offsets")),
      "a compressed sample was looked up at its instant",
    ).toBe(true);
  });

  it("compresses every array of an hour in its row, and keeps no array for a column without values that hour", async () => {
    const id = await addConnection(store.db, "inline");
    // An hour of one database every minute: four columns with values (the row is over TOAST's 2 kB), the rest null.
    const rows = Array.from({ length: 60 }, (_, j) => ({
      collected_at: new Date(T0 + j * 60_000).toISOString(),
      database_name: "shop",
      numbackends: j % 7,
      xact_commit: 1_000 * j + (j % 3),
      blk_read_time: 150 * j,
      active_time: 900.5 * j,
    }));
    await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows });
    const before = await store.db.query("SELECT * FROM metrics.pg_stat_database WHERE connection_id = $1 ORDER BY collected_at", [id]);
    await compressChunk(store.db, findProbe("pg_stat_database")!, id, T0);
    const [row] = await store.db.query<Record<string, string | boolean | null>>(
      `SELECT pg_column_compression(numbackends) AS numbackends, pg_column_compression(xact_commit) AS xact_commit,
              pg_column_compression(blk_read_time) AS blk_read_time, pg_column_compression(active_time) AS active_time,
              xact_rollback IS NULL AS xact_rollback_none, stats_reset IS NULL AS stats_reset_none,
              (SELECT pg_relation_size(t.reltoastrelid) FROM pg_class t WHERE t.oid = c.tableoid)::int AS out_of_line
         FROM metrics.pg_stat_database__compressed c WHERE connection_id = $1`,
      [id],
    );
    // (The offsets, whole minutes here, are left as they are: pglz does not make them a quarter smaller.)
    expect(row).toEqual({
      numbackends: "pglz",
      xact_commit: "pglz",
      blk_read_time: "pglz",
      active_time: "pglz",
      xact_rollback_none: true,
      stats_reset_none: true,
      out_of_line: 0,
    });
    expect(await store.db.query("SELECT * FROM metrics.pg_stat_database WHERE connection_id = $1 ORDER BY collected_at", [id])).toEqual(before);
  });

  it("takes a write into a compressed hour as if it had stayed raw, and refuses samples already stored there", async () => {
    const rows = history(4);
    const extraAt = T0 + 10 * HOUR + 60_000; // between two samples of day one
    const extra = rows
      .filter((r) => r.collected_at === rows.find((x) => Date.parse(x.collected_at as string) > extraAt)!.collected_at)
      .map((r) => ({
        ...r,
        collected_at: new Date(extraAt).toISOString(),
      }));
    const [compressedId, rawId] = [await addConnection(store.db, "compressed"), await addConnection(store.db, "kept-raw")];
    for (const id of [compressedId, rawId]) await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: rows as never });
    await compressClosedChunks(store.db, Date.now());
    expect((await counts(store.db, compressedId)).raw).toBe(0);

    const first = rows.filter((r) => r.collected_at === rows[0].collected_at);
    await expect(writeSamples(store.db, { connectionId: compressedId, probe: probe.name, rows: first as never })).rejects.toThrow(/already stored/);
    expect((await counts(store.db, compressedId)).raw).toBe(0); // the hour it turned back to raw rows went back with the refusal

    for (const id of [compressedId, rawId]) await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: extra as never });
    expect(await viewRows(store.db, compressedId)).toEqual(await viewRows(store.db, rawId));
    expect(await answers(store.db, compressedId)).toEqual(await answers(store.db, rawId));
    await compressClosedChunks(store.db, Date.now()); // the hour written into is compressed again, with the new sample
    expect(await counts(store.db, compressedId)).toEqual({ raw: 0, compressed: rows.length + extra.length });
    expect(await answers(store.db, compressedId)).toEqual(await answers(store.db, rawId));
  });

  it("gives back the pages of raw weeks it emptied, and drops compressed hours with their week once past retention", async () => {
    const id = await addConnection(store.db, "retention");
    await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: history(5) as never });
    await compressClosedChunks(store.db, Date.now());
    expect((await counts(store.db, id)).compressed).toBeGreaterThan(0);
    // Every hour of every connection here is compressed: the raw weeks are emptied, their pages given back.
    const [{ bytes }] = await store.db.query<{ bytes: number }>(
      "SELECT sum(pg_relation_size(inhrelid))::int AS bytes FROM pg_inherits WHERE inhparent = 'metrics.pg_stat_statements__raw'::regclass",
    );
    expect(bytes).toBe(0);
    const dropped = await dropExpiredPartitions(store.db, new Date(T0 + 400 * DAY));
    expect(dropped).toContain("pg_stat_statements__compressed_20260427");
    expect(await counts(store.db, id)).toEqual({ raw: 0, compressed: 0 });
  });
});

describe("compressed history through the Neon driver (neon-http, against the local stand-in for Neon's proxy)", () => {
  let store: TestDatastore;
  let proxy: NeonProxy;
  let neon: Driver;
  beforeAll(async () => {
    [store, proxy] = await Promise.all([migratedDatastore("pg"), startNeonProxy()]);
    neon = openNeonHttp(store.url!, { fetchEndpoint: proxy.fetchEndpoint, wsProxy: proxy.wsProxy, secureWebSocket: false, webSocketConstructor: WebSocket });
  });
  afterAll(async () => {
    await neon.close();
    await proxy.close();
    await store.close();
  });

  // About a day: each hour is a few HTTP requests through the stand-in, a minute for three days on a loaded machine.
  it("writes, compresses and reads back the same rows and answers", async () => {
    const id = await addConnection(store.db, "neon");
    const rows = history(30, [40, 50]);
    await writeSamples(neon, { connectionId: id, probe: probe.name, rows: rows as never });
    const [rowsBefore, answersBefore] = [await viewRows(neon, id), await answers(neon, id)];
    // A round out of time stops before its next chunk and says so; the next goes on from there.
    expect(await compressClosedChunks(neon, Date.now(), 0)).toEqual({ chunks: 0, rows: 0, unfinished: true });
    // A budget far past the default 10 s: each statement is an HTTP request here, and a loaded machine ran out of
    // the default's time after a quarter of the chunks.
    expect(await compressClosedChunks(neon, Date.now(), 120_000)).toMatchObject({ rows: rows.length, unfinished: false });
    expect(await counts(neon, id)).toEqual({ raw: 0, compressed: rows.length });
    expect(await viewRows(neon, id)).toEqual(rowsBefore);
    expect(await answers(neon, id)).toEqual(answersBefore);
  }, 180_000);
});

describe("compressed history with several instances (PostgreSQL)", () => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
  });
  afterAll(() => store.close());

  it("compresses each hour once when two instances run at the same time", async () => {
    const ids = await Promise.all([1, 2, 3, 4].map((i) => addConnection(store.db, `twice-${i}`)));
    for (const [i, id] of ids.entries()) await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: history(10 + i) as never });
    const before = await Promise.all(ids.map((id) => viewRows(store.db, id)));
    const other = await openPg(store.url!);
    try {
      const rounds = await Promise.all([compressClosedChunks(store.db, Date.now()), compressClosedChunks(other, Date.now())]);
      const chunks = (
        await store.db.query<{ n: number }>(
          "SELECT count(DISTINCT (connection_id, chunk_start))::int AS n FROM metrics.pg_stat_statements__compressed WHERE connection_id = ANY($1)",
          [ids],
        )
      )[0].n;
      // A chunk skipped by one (locked by the other) is compressed by the other, never twice.
      expect(rounds[0].chunks + rounds[1].chunks).toBe(chunks);
      expect(await Promise.all(ids.map((id) => viewRows(store.db, id)))).toEqual(before);
      for (const id of ids) expect((await counts(store.db, id)).raw).toBe(0);
    } finally {
      await other.close();
    }
  });

  it("loses nothing when the compressing backend is killed mid-chunk", async () => {
    const id = await addConnection(store.db, "killed");
    const rows = history(20);
    await writeSamples(store.db, { connectionId: id, probe: probe.name, rows: rows as never });
    const before = await viewRows(store.db, id);
    // A row of the first hour locked elsewhere: the compressor's delete waits on it, half done, until it is killed.
    const blocker = await openPg(store.url!);
    const compressor = await openPg(store.url!);
    try {
      const release = await holdRowLock(blocker, id, rows[0].collected_at as string);
      const running = compressChunk(compressor, probe, id, T0).catch((err: Error) => err);
      await waitFor(
        async () =>
          (await store.db.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_stat_statements__compressed%'")).length > 0,
      );
      await store.db.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_stat_statements__compressed%'",
      );
      expect(await running).toBeInstanceOf(Error);
      await release();
      expect(await viewRows(store.db, id)).toEqual(before);
      expect((await counts(store.db, id)).compressed).toBe(0);
      expect((await compressChunk(store.db, probe, id, T0))!).toBeGreaterThan(0); // and the next attempt does the hour
      expect(await viewRows(store.db, id)).toEqual(before);
    } finally {
      await Promise.all([blocker.close(), compressor.close().catch(() => {})]);
    }
  });
});

/** Locks the rows of one sample in an open transaction; answers how to end it. */
async function holdRowLock(db: Awaited<ReturnType<typeof openPg>>, connectionId: number, at: string): Promise<() => Promise<void>> {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const done = db.transaction(async (tx) => {
    await tx.query("SELECT 1 FROM metrics.pg_stat_statements__raw WHERE connection_id = $1 AND collected_at = $2 FOR UPDATE", [connectionId, at]);
    locked();
    await ended;
  });
  await isLocked;
  return async () => {
    end();
    await done;
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}
