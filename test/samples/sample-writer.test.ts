import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compressClosedChunks, KEEP_RAW_MS } from "../../src/samples/compress-history.ts";
import { weekOf, weeksOf } from "../../src/samples/partitions.ts";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { type SampleRow, writeSamples, writeSamplesIn } from "../../src/samples/sample-writer.ts";
import { runCli } from "../support/cli.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

describe("weekly partitions", () => {
  it.each([
    ["2026-04-06T00:00:00Z", "pg_stat_wal_20260406", "2026-04-06", "2026-04-13"],
    ["2026-04-12T23:59:59Z", "pg_stat_wal_20260406", "2026-04-06", "2026-04-13"],
    ["2026-04-13T02:30:00+05:00", "pg_stat_wal_20260406", "2026-04-06", "2026-04-13"],
    ["2026-04-12T22:00:00-05:00", "pg_stat_wal_20260413", "2026-04-13", "2026-04-20"],
  ])("%s falls in %s", (at, name, from, to) => {
    const p = weekOf("pg_stat_wal", new Date(at));
    expect(p).toEqual({ name, from: new Date(`${from}T00:00:00Z`), to: new Date(`${to}T00:00:00Z`) });
  });

  it("lists each week of many times once, in order of first appearance", () => {
    const times = ["2026-04-13T00:00:00Z", "2026-04-12T23:59:59Z", "2026-04-13T05:00:00Z", "2026-04-20T00:00:00Z", "2026-04-07T12:00:00Z"].map(Date.parse);
    expect(weeksOf("pg_stat_wal", times).map((w) => w.name)).toEqual(["pg_stat_wal_20260413", "pg_stat_wal_20260406", "pg_stat_wal_20260420"]);
  });
});

describe("sample writer and import", () => {
  let store: TestDatastore;
  let conn: number;
  const count = async (probe: string) => (await store.db.query<{ n: number }>(`select count(*)::int as n from metrics.${probe}`))[0].n;

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    conn = await addConnection(store.db, "primary");
  });
  afterAll(() => store.close());

  it("writes rows into weekly partitions created on demand, across a week boundary", async () => {
    const rows = ["2026-04-12T23:59:00Z", "2026-04-13T00:01:00Z"].map((t, i) => ({ collected_at: t, wal_records: i, stats_reset: null }));
    expect(await writeSamples(store.db, { connectionId: conn, probe: "pg_stat_wal", rows })).toBe(2);
    const parts = await store.db.query<{ name: string }>(
      "select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'metrics.pg_stat_wal__raw'::regclass order by 1",
    );
    expect(parts.map((p) => p.name)).toEqual(["pg_stat_wal__raw_20260406", "pg_stat_wal__raw_20260413"]);
  });

  it("asks once per batch whether the partitions of every table it writes exist, creates only those that do not, and asks again for a week outside the batch's", async () => {
    const own = await addConnection(store.db, "partitions");
    const statements: string[] = [];
    const write = (rows: SampleRow[]) =>
      store.db.transaction((tx) =>
        writeSamplesIn({ query: (sql, params) => (statements.push(sql), tx.query(sql, params)) }, { connectionId: own, probe: "pg_stat_database", rows }),
      );
    const at = (iso: string, i: number) => ["a", "b"].map((d) => ({ collected_at: iso, database_name: d, xact_commit: i * 10, numbackends: i }));
    const asked = () => statements.filter((s) => s.includes("to_regclass")).length;
    const created = () => statements.filter((s) => s.includes("CREATE TABLE")).map((s) => s.match(/metrics\."([^"]+)"/)![1]);
    const tables = [
      "pg_stat_database__raw",
      "pg_stat_database__changes",
      "pg_stat_database__irregular",
      "pg_stat_database__levels",
      "pg_stat_database__change_cells",
      "pg_stat_database__entity_cells",
    ];
    await write([...at("2026-05-03T23:58:00Z", 1), ...at("2026-05-03T23:59:00Z", 2)]);
    expect(asked()).toBe(1);
    expect(created().sort()).toEqual(tables.map((t) => `${t}_20260427`).sort()); // the week of 2026-04-27, new in each

    statements.length = 0;
    await write(at("2026-05-04T00:00:00Z", 3)); // the next week's first minute: new partitions again
    expect(asked()).toBe(1);
    expect(created().sort()).toEqual(tables.map((t) => `${t}_20260504`).sort());

    statements.length = 0;
    await write(at("2026-05-04T00:01:00Z", 4));
    expect(asked()).toBe(1);
    expect(statements.filter((s) => /CREATE TABLE|SAVEPOINT/.test(s))).toEqual([]);

    // A sample written before the next week's first one changes that one's interval, whose change lands in the
    // next week: a partition gone from there is asked for and made again.
    await store.db.query("DROP TABLE metrics.pg_stat_database__changes_20260504");
    statements.length = 0;
    await write(at("2026-05-03T23:59:30Z", 2));
    // The batch's week; the next week of the changes, the irregular intervals (which the datastore may write there),
    // the change cells and the entity cells.
    expect(asked()).toBe(5);
    expect(created()).toEqual(["pg_stat_database__changes_20260504"]);
    const [{ n }] = await store.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM metrics.pg_stat_database__changes WHERE connection_id = $1 AND collected_at = '2026-05-04T00:00:00Z'",
      [own],
    );
    expect(n).toBe(1);
    await store.db.query("DELETE FROM connections WHERE id = $1", [own]); // the import below counts every row
  });

  it.each([
    [{ probe: "pg_stat_nothing", rows: [{ collected_at: "2026-01-01T00:00:00Z" }] }, "unknown probe `pg_stat_nothing`"],
    [
      { probe: "pg_stat_wal", rows: [{ collected_at: "2026-01-01T00:00:00Z" }, { collected_at: "2026-01-01T00:01:00Z", wal_bogus: 1 }] },
      "row 2: probe `pg_stat_wal` has no column `wal_bogus`",
    ],
    [{ probe: "pg_stat_wal", rows: [{ collected_at: "yesterday" }] }, "row 1: `collected_at` must be an ISO 8601 timestamp"],
    [{ probe: "pg_stat_database", rows: [{ collected_at: "2026-01-01T00:00:00Z", xact_commit: 1 }] }, "row 1: entity key `database_name` is required"],
    [
      {
        probe: "pg_stat_database",
        rows: [
          { collected_at: "2026-01-01T00:00:00Z", database_name: "a" },
          { collected_at: "2026-01-01T00:00:00Z", database_name: "a" },
        ],
      },
      "row 2: a row for the same entity and collected_at appears twice",
    ],
    [
      { probe: "pg_stat_wal", rows: [{ collected_at: "2026-02-01T00:00:00Z", wal_records: "many" }] },
      'row 1, column `wal_records`: expected a number (bigint), got "many"',
    ],
    // The same instant spelled twice, and a later row of a sample whose collected_at was already checked.
    [
      {
        probe: "pg_stat_database",
        rows: [
          { collected_at: "2026-01-01T00:00:00Z", database_name: "a" },
          { collected_at: "2026-01-01T01:00:00+01:00", database_name: "a" },
        ],
      },
      "row 2: a row for the same entity and collected_at appears twice",
    ],
    [
      {
        probe: "pg_stat_database",
        rows: [
          { collected_at: "2026-02-01T00:00:00Z", database_name: "a", xact_commit: 1 },
          { collected_at: "2026-02-01T00:00:00Z", database_name: "b", xact_commit: Number.POSITIVE_INFINITY },
        ],
      },
      "row 2, column `xact_commit`: not a finite number",
    ],
    [
      { probe: "pg_stat_statements", rows: [{ collected_at: "2026-02-01T00:00:00Z", database_name: "a", queryid: "1", userid: 1, dbid: 1, toplevel: 1 }] },
      "row 1, column `toplevel`: expected true or false, got 1",
    ],
  ])("rejects a bad batch and writes nothing: %#", async (batch, message) => {
    const before = await count("pg_stat_wal");
    await expect(writeSamples(store.db, { connectionId: conn, ...batch })).rejects.toThrow(message);
    expect(await count("pg_stat_wal")).toBe(before);
  });

  it("rejects samples of a connection that does not exist", async () => {
    await expect(writeSamples(store.db, { connectionId: 777, probe: "pg_stat_wal", rows: [{ collected_at: "2026-03-01T00:00:00Z" }] })).rejects.toThrow(
      "connection 777 does not exist",
    );
  });

  it("keeps no foreign key on the metrics tables: deleting a connection deletes its rows from every one of them, and no other's", async () => {
    await forgetsDeletedConnections(store.db);
  });

  it("makes a connection's deletion wait for a batch being written, whose rows it then deletes", async () => {
    const id = await addConnection(store.db, "deleted-while-writing");
    const other = openPg(store.url!);
    let deleted = false;
    let deletion: Promise<unknown> | undefined;
    await store.db.transaction(async (tx) => {
      await writeSamplesIn(tx, { connectionId: id, probe: "pg_stat_wal", rows: [{ collected_at: "2026-06-02T00:00:00Z", wal_records: 1 }] });
      deletion = other.query("DELETE FROM connections WHERE id = $1", [id]).then(() => (deleted = true));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(deleted, "the deletion waits for the batch's commit").toBe(false);
    });
    await deletion;
    await other.close();
    expect(deleted).toBe(true);
    const [{ n }] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM metrics.pg_stat_wal WHERE connection_id = $1", [id]);
    expect(n).toBe(0);
    await expect(writeSamples(store.db, { connectionId: id, probe: "pg_stat_wal", rows: [{ collected_at: "2026-06-02T00:01:00Z" }] })).rejects.toThrow(
      `connection ${id} does not exist`,
    );
  });

  it("imports NDJSON through `pglens samples import`, all or nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pglens-import-"));
    const good = join(dir, "good.ndjson");
    const lines = Array.from({ length: 12_000 }, (_, i) =>
      JSON.stringify({ collected_at: new Date(Date.UTC(2026, 4, 1) + i * 60_000).toISOString(), database_name: "app", xact_commit: i }),
    );
    writeFileSync(good, `${lines.join("\n")}\n\n`);
    const env = { PGLENS_DATASTORE_URL: store.url! };
    const ok = await runCli(["samples", "import", "--connection-id", String(conn), "--probe", "pg_stat_database", "--batch-size", "1000", good], env);
    expect(ok.stderr).toContain("imported 12,000 rows into pg_stat_database for connection");
    expect(ok.code).toBe(0);
    expect(await count("pg_stat_database")).toBe(12_000);

    const bad = join(dir, "bad.ndjson");
    writeFileSync(bad, [JSON.stringify({ collected_at: "2026-07-01T00:00:00Z", database_name: "app" }), "{oops"].join("\n"));
    const failed = await runCli(["samples", "import", "--connection-id", String(conn), "--probe", "pg_stat_database", bad], env);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/line 2: not valid JSON/);
    expect(await count("pg_stat_database")).toBe(12_000);

    const fromStdin = await runCli(
      ["samples", "import", "--connection-id", String(conn), "--probe", "pg_stat_database", "-"],
      env,
      JSON.stringify({ collected_at: "2026-08-01T00:00:00Z", database_name: "app" }),
    );
    expect(fromStdin.code).toBe(0);
    expect(await count("pg_stat_database")).toBe(12_001);

    const usage = await runCli(["samples", "import", "--probe", "pg_stat_database"], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--connection-id N is required");
  });

  it("names the input line of a wrong type or a future sample, and refuses an unknown probe even on empty input", async () => {
    const env = { PGLENS_DATASTORE_URL: store.url! };
    const before = await count("pg_stat_database");
    const importLines = (probe: string, input: string) => runCli(["samples", "import", "--connection-id", String(conn), "--probe", probe, "-"], env, input);
    const row = (fields: Record<string, unknown>) => JSON.stringify({ collected_at: "2026-06-01T00:00:00Z", database_name: "app", ...fields });
    const wrongType = await importLines("pg_stat_database", [row({ collected_at: "2026-06-01T00:01:00Z" }), "", row({ xact_commit: "many" })].join("\n"));
    expect(wrongType.code).toBe(2);
    expect(wrongType.stderr).toContain('line 3, column `xact_commit`: expected a number (bigint), got "many"');
    const future = await importLines("pg_stat_database", row({ collected_at: new Date(Date.now() + 86_400_000).toISOString() }));
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/line 1: `collected_at` \S+ is in the future/);
    const unknown = await importLines("pg_stat_nothing", "");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown probe `pg_stat_nothing`");
    expect(await count("pg_stat_database")).toBe(before);
  });
});

/**
 * Writes the same history for two connections, deletes one, and checks that every metrics table of the probe lost
 * that one's rows and kept the other's, with no foreign key left in `metrics`; both connections are gone after.
 */
async function forgetsDeletedConnections(db: Driver): Promise<void> {
  const [gone, kept] = [await addConnection(db, "to-delete"), await addConnection(db, "to-keep")];
  // Database c appears an hour in: an irregular interval. The first day's rows are then compressed, the second's stay raw.
  const rows = Array.from({ length: 90 }, (_, i) =>
    ["a", "b", ...(i >= 60 ? ["c"] : [])].map((d) => ({
      collected_at: new Date(Date.UTC(2026, 5, 1, 23) + i * 60_000).toISOString(),
      database_name: d,
      xact_commit: i * 10,
      numbackends: i % 3,
    })),
  ).flat();
  for (const id of [gone, kept]) await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows });
  await compressClosedChunks(db, Date.UTC(2026, 5, 2) + KEEP_RAW_MS);
  const tables = (
    await db.query<{ name: string }>(
      "SELECT c.oid::regclass::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'metrics' AND c.relkind = 'p' AND NOT c.relispartition AND (c.relname = 'pg_stat_database' OR c.relname LIKE 'pg\\_stat\\_database\\_\\_%')",
    )
  ).map((t) => t.name);
  const counts = async (id: number) =>
    Promise.all(tables.map(async (t) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t} WHERE connection_id = $1`, [id]))[0].n));
  expect(tables.length).toBeGreaterThanOrEqual(7); // raw rows, compressed days, changes, irregular intervals, levels, change and entity cells
  expect(
    (await counts(gone)).filter((n) => n === 0),
    `the writer filled every table: ${tables}: ${await counts(gone)}`,
  ).toEqual([]);
  const before = await counts(kept);
  await db.query("DELETE FROM connections WHERE id = $1", [gone]);
  expect(await counts(gone)).toEqual(tables.map(() => 0));
  expect(await counts(kept)).toEqual(before);
  const [{ keys }] = await db.query<{ keys: number }>(
    "SELECT count(*)::int AS keys FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace WHERE c.contype = 'f' AND n.nspname = 'metrics'",
  );
  expect(keys).toBe(0);
  await db.query("DELETE FROM connections WHERE id = $1", [kept]); // tests that follow count every row
}

describe("the embedded datastore (PGlite)", () => {
  it("deletes a deleted connection's rows from every metrics table too", async () => {
    const store = await migratedDatastore("pglite");
    try {
      await forgetsDeletedConnections(store.db);
    } finally {
      await store.close();
    }
  });
});
