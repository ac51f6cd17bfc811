import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import { openPglite } from "../../drivers/pglite.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { MIGRATIONS } from "../../src/datastore/migrations/index.ts";
import { replayFor } from "../../src/datastore/migrations/probes-at.ts";
import { compressChunk } from "../../src/samples/compress-history.ts";
import { type SampleBatch, writeSamples } from "../../src/samples/sample-writer.ts";
import type { Driver } from "../../drivers/types.ts";
import { LEVEL_FACTS, PART_EXTREME_FACTS, PART_FACTS } from "../../src/probes/ddl.ts";
import { createCompressedTable } from "../../src/probes/history-ddl.ts";
import { findProbe } from "../../src/probes/index.ts";
import { createTestDatabase } from "../support/postgres.ts";

const latest = Math.max(...MIGRATIONS.map((m) => m.version));

/** A datastore on PGlite migrated up to, not including, `version`: as made before that migration. */
async function madeBefore(version: number): Promise<Driver> {
  const db = await openPglite();
  await migrate(
    db,
    MIGRATIONS.filter((m) => m.version < version),
  );
  return db;
}

describe("migrations", () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await createTestDatabase(inject("pg17Url"));
  });
  afterAll(() => database.drop());

  it("are numbered without gaps or duplicates", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it("apply once even when two instances start at the same moment", async () => {
    const a = openPg(database.url);
    const b = openPg(database.url);
    const [first, second] = await Promise.all([migrate(a), migrate(b)]);
    expect(first.applied.length + second.applied.length).toBe(MIGRATIONS.length);
    expect(first.version).toBe(latest);
    expect(second.version).toBe(latest);
    const again = await migrate(a);
    expect(again).toEqual({ applied: [], version: latest });
    const tables = await a.query<{ name: string }>(
      "select table_schema || '.' || table_name as name from information_schema.tables where table_name in ('connections','probe_configs','schema_version') order by 1",
    );
    expect(tables.map((t) => t.name)).toEqual(["public.connections", "public.probe_configs", "public.schema_version"]);
    expect(await a.query("select 1 from information_schema.schemata where schema_name = 'metrics'")).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
  });

  it("bring the WAL columns of pg_stat_statements to a datastore made before them (migration 16)", async () => {
    // Migrations 2 and 3 create the catalogue as it stands today: take the columns away to get the old tables.
    const db = await madeBefore(16);
    const wal = async () =>
      (
        await db.query<{ t: string }>(
          "SELECT table_name || '.' || column_name AS t FROM information_schema.columns WHERE table_schema = 'metrics' AND column_name = 'wal_bytes' AND table_name LIKE 'pg_stat_statements%' ORDER BY 1",
        )
      ).map((r) => r.t);
    expect(await wal()).toEqual(["pg_stat_statements.wal_bytes", "pg_stat_statements__changes.wal_bytes"]);
    for (const table of ["pg_stat_statements", "pg_stat_statements__changes"])
      await db.query(`ALTER TABLE metrics.${table} DROP COLUMN wal_records, DROP COLUMN wal_fpi, DROP COLUMN wal_bytes`);
    expect(await wal()).toEqual([]);
    expect((await migrate(db)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= 16).map((m) => m.version));
    expect(await wal()).toEqual([
      "pg_stat_statements.wal_bytes",
      "pg_stat_statements__changes.wal_bytes",
      "pg_stat_statements__compressed.wal_bytes",
      "pg_stat_statements__irregular.wal_bytes",
      "pg_stat_statements__raw.wal_bytes",
    ]);
    await db.close();
  });

  // Migration 24 creates the cells as the catalogue stands today: taking a migration's columns away gives the old table.
  it.each([
    { version: 25, facts: LEVEL_FACTS, what: "level facts" },
    { version: 26, facts: PART_FACTS, what: "running facts over 5-minute parts" },
  ])(
    "bring gauges' $what to the entity cells of a datastore made before them (migration $version), empty in the cells already there",
    async ({ version, facts }) => {
      const db = await madeBefore(version);
      const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
      await writeBefore40(db, {
        connectionId: id,
        probe: "pg_stat_database",
        rows: [0, 60_000].map((t) => ({
          collected_at: new Date(Date.parse("2026-05-01T00:00:00Z") + t).toISOString(),
          database_name: "a",
          xact_commit: t,
          numbackends: 3,
        })),
      });
      await db.query(`ALTER TABLE metrics.pg_stat_database__entity_cells ${facts.map((f) => `DROP COLUMN "numbackends:${f}"`).join(", ")}`);
      expect((await migrate(db)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= version).map((m) => m.version));
      const cells = await db.query(`SELECT "numbackends:${facts[0]}" AS fact, intervals FROM metrics.pg_stat_database__entity_cells WHERE entity = '{a}'`);
      expect(cells).toEqual([{ fact: null, intervals: 1 }]);
      await db.close();
    },
  );

  // Migrations 3 and 23 create the changes and their cells as the catalogue stands today, likewise.
  it.each([
    { version: 32, table: "pg_stat_database__change_cells", columns: ["min_span_ms"], what: "the shortest interval to the change cells" },
    { version: 33, table: "pg_stat_database__changes", columns: ['"numbackends:n"', '"numbackends:sum"'], what: "the gauges' counts and sums to the changes" },
  ])("bring $what of a datastore made before (migration $version), empty in the rows already there", async ({ version, table, columns }) => {
    const db = await madeBefore(version);
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
    await writeBefore40(db, {
      connectionId: id,
      probe: "pg_stat_database",
      rows: [0, 60_000].map((t) => ({
        collected_at: new Date(Date.parse("2026-05-01T00:00:00Z") + t).toISOString(),
        database_name: "a",
        xact_commit: t,
        numbackends: 3,
      })),
    });
    await db.query(`ALTER TABLE metrics.${table} ${columns.map((c) => `DROP COLUMN ${c}`).join(", ")}`);
    expect((await migrate(db)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= version).map((m) => m.version));
    const rows = await db.query<Record<string, unknown>>(`SELECT ${columns.join(", ")} FROM metrics.${table}`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => Object.values(r).every((v) => v === null))).toBe(true);
    await db.close();
  });

  it("drop the index on the changes' span (migration 31) for the change cells' shortest interval (migration 32)", async () => {
    const db = await madeBefore(32);
    const index = () => db.query<{ i: string | null }>("SELECT to_regclass('metrics.pg_stat_database__changes_by_span')::text AS i");
    expect(await index()).toEqual([{ i: "metrics.pg_stat_database__changes_by_span" }]);
    await migrate(db);
    expect(await index()).toEqual([{ i: null }]);
    await db.close();
  });

  // The catalogue no longer declares the metrics tables' foreign key: putting it back on every one gives the old
  // tables, on partitions and parent alike, as a datastore made before migration 34 has them.
  it("drop the metrics tables' foreign keys to connections of a datastore made before (migration 34)", async () => {
    const db = await madeBefore(34);
    const keys = async () =>
      (
        await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace s ON s.oid = t.relnamespace WHERE c.contype = 'f' AND s.nspname = 'metrics'",
        )
      )[0].n;
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
    await writeBefore40(db, {
      connectionId: id,
      probe: "pg_stat_database",
      rows: [{ collected_at: "2026-05-01T00:00:00Z", database_name: "a", xact_commit: 1 }],
    });
    expect(await keys(), "the catalogue declares no foreign key").toBe(0);
    const tables = await db.query<{ t: string }>(
      "SELECT c.oid::regclass::text AS t FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'metrics' AND c.relkind = 'p' AND NOT c.relispartition",
    );
    for (const { t } of tables) await db.query(`ALTER TABLE ${t} ADD FOREIGN KEY (connection_id) REFERENCES connections (id) ON DELETE CASCADE`);
    expect(await keys()).toBeGreaterThan(tables.length); // each partition has its parent's
    expect((await migrate(db)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= 34).map((m) => m.version));
    expect(await keys()).toBe(0);
    await db.query("DELETE FROM connections WHERE id = $1", [id]);
    expect(await db.query("SELECT 1 FROM metrics.pg_stat_database")).toEqual([]);
    await db.close();
  });

  it("give the alerts of a datastore made before correlation (migration 42) a group of their own and their probe", async () => {
    const db = await madeBefore(42);
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
    await db.query(
      `INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name)
       VALUES ('threshold', $1, 'warning', 'deadlocks', 'active', 'pg_stat_database.deadlocks_delta'), ('connection', $1, 'critical', 'down', 'active', '')`,
      [id],
    );
    await migrate(db);
    expect(await db.query("SELECT id::int = correlation_id::int AS own, probe_name FROM alerts ORDER BY id")).toEqual([
      { own: true, probe_name: "pg_stat_database" },
      { own: true, probe_name: null },
    ]);
    // Inserted without a correlation id (as the demo's history is): a group of its own.
    const [fresh] = await db.query<{ id: number; correlation_id: number }>(
      "INSERT INTO alerts (alert_type, connection_id, severity, title, status, cleared_at) VALUES ('connection', $1, 'info', 'x', 'cleared', now()) RETURNING id::int, correlation_id::int",
      [id],
    );
    expect(fresh.correlation_id).toBe(fresh.id);
    await db.close();
  });

  it("build a probe that joins later (migration 43) with every earlier migration's per-probe statements", async () => {
    const joined = [findProbe("pg_table_bloat")!, findProbe("pg_sys_cpu_usage_info")!];
    const m43 = MIGRATIONS.find((m) => m.version === 43)!;
    expect(m43.statements).toEqual(
      replayFor(
        MIGRATIONS.filter((m) => m.version < 43),
        joined,
      ),
    );
    // and no earlier migration touched them
    for (const m of MIGRATIONS.filter((x) => x.version < 43))
      for (const sql of m.statements) for (const p of joined) expect(sql, `migration ${m.version}`).not.toContain(p.name);
  });

  it("roll back a failing migration entirely", async () => {
    const db = await openPglite();
    const broken = [...MIGRATIONS, { version: latest + 1, name: "broken", statements: ["CREATE TABLE half_done (id int)", "SELECT * FROM missing"] }];
    await expect(migrate(db, broken)).rejects.toMatchObject({ code: "42P01" });
    expect(await db.query("select to_regclass('half_done') as t")).toEqual([{ t: null }]);
    expect(await db.query("select to_regclass('schema_version') as t")).toEqual([{ t: null }]);
    expect((await migrate(db)).version).toBe(latest);
    await db.close();
  });

  it("keep a datastore's samples readable under the probe's name when they move to `<probe>__raw` (migration 40), and writable after", async () => {
    const db = await madeBefore(40);
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
    const rows = (from: number) =>
      [0, 1].map((i) => ({ collected_at: new Date(Date.UTC(2026, 4, 1) + (from + i) * 60_000).toISOString(), database_name: "a", xact_commit: from + i }));
    await writeBefore40(db, { connectionId: id, probe: "pg_stat_database", rows: rows(0) });
    const stored = () => db.query("SELECT collected_at, database_name, xact_commit FROM metrics.pg_stat_database ORDER BY collected_at");
    const before = await stored();
    expect((await migrate(db)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= 40).map((m) => m.version));
    expect(await stored()).toEqual(before);
    const kinds = await db.query(
      "SELECT relname, relkind FROM pg_class WHERE relnamespace = 'metrics'::regnamespace AND relname IN ('pg_stat_database', 'pg_stat_database__raw', 'pg_stat_database__raw_20260427') ORDER BY 1",
    );
    expect(kinds).toEqual([
      { relname: "pg_stat_database", relkind: "v" },
      { relname: "pg_stat_database__raw", relkind: "p" },
      { relname: "pg_stat_database__raw_20260427", relkind: "r" }, // the week's partition, renamed: the writer finds it
    ]);
    await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows: rows(2) });
    expect(await stored()).toHaveLength(4);
    await db.close();
  });

  it("give compressed weeks made before migration 45 the TOAST target and null arrays, and compress into them", async () => {
    const db = await madeBefore(45);
    // A week partition as compression made them before: no storage parameters.
    await db.query(
      "CREATE TABLE metrics.pg_stat_database__compressed_20260427 PARTITION OF metrics.pg_stat_database__compressed FOR VALUES FROM ('2026-04-27') TO ('2026-05-04')",
    );
    expect((await migrate(db)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= 45).map((m) => m.version));
    const [{ options }] = await db.query<{ options: string[] }>(
      "SELECT reloptions AS options FROM pg_class WHERE relname = 'pg_stat_database__compressed_20260427'",
    );
    expect(options).toEqual(["toast_tuple_target=128"]);
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
    const rows = [0, 1].map((i) => ({ collected_at: new Date(Date.UTC(2026, 4, 1) + i * 60_000).toISOString(), database_name: "a", xact_commit: i }));
    await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows });
    expect(await compressChunk(db, findProbe("pg_stat_database")!, id, Date.UTC(2026, 4, 1))).toBe(2);
    expect(await db.query("SELECT xact_commit, xact_rollback FROM metrics.pg_stat_database__compressed")).toEqual([
      { xact_commit: [0, 1], xact_rollback: null },
    ]);
    await db.close();
  });

  it("drop the 5-minute parts from the statements' entity cells (migration 46), and write cells without them", async () => {
    const db = await madeBefore(46);
    const partColumns = async (table: string) =>
      (
        await db.query<{ name: string }>(
          "SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attname LIKE '%:part%' AND NOT attisdropped",
          [`metrics.${table}`],
        )
      ).length;
    // The datastore had them, as migrations 24 and 26 made them then (today's make none).
    const types: Record<string, string> = { part_n: "integer[]", part_sum: "double precision[]", part_last_at: "timestamptz[]" };
    await db.query(
      `ALTER TABLE metrics.pg_stat_statements__entity_cells ${["min", "max", "mean", "stddev"]
        .flatMap((g) => Object.entries(types).map(([f, type]) => `ADD COLUMN "${g}_exec_time:${f}" ${type}`))
        .join(", ")}`,
    );
    expect(await partColumns("pg_stat_statements__entity_cells")).toBe(12);
    expect((await migrate(db)).applied.map((m) => m.version)).toEqual(MIGRATIONS.filter((m) => m.version >= 46).map((m) => m.version));
    expect(await partColumns("pg_stat_statements__entity_cells")).toBe(0);
    expect(await partColumns("pg_stat_database__entity_cells")).toBe(PART_FACTS.length); // numbackends keeps its parts
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
    const rows = [0, 1].map((i) => ({
      collected_at: new Date(Date.UTC(2026, 4, 1) + i * 60_000).toISOString(),
      database_name: "app",
      queryid: "7",
      userid: 10,
      dbid: 5,
      toplevel: true,
      calls: i,
      mean_exec_time: 2,
    }));
    await writeSamples(db, { connectionId: id, probe: "pg_stat_statements", rows: rows as never });
    const cells = await db.query(
      `SELECT intervals, "mean_exec_time:n" AS n FROM metrics.pg_stat_statements__entity_cells WHERE connection_id = $1 AND entity <> '{}'`,
      [id],
    );
    expect(cells).toEqual([{ intervals: 1, n: 2 }]);
    await db.close();
  });

  it("bring each 5-minute part's extremes and the running latest value to the entity cells (migration 47), empty in the cells already there, and keep them empty as samples are added", async () => {
    const db = await madeBefore(47);
    const [{ id }] = await db.query<{ id: number }>("INSERT INTO connections (name, host, username) VALUES ('old', 'localhost', 'u') RETURNING id");
    const at = (minute: number) => new Date(Date.parse("2026-05-01T00:00:00Z") + minute * 60_000).toISOString();
    const sample = (minute: number) => ({ collected_at: at(minute), database_name: "a", xact_commit: minute, numbackends: minute + 1 });
    await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows: [0, 1].map(sample) });
    // Migration 24 makes the cells as the catalogue stands today: taking the columns away gives the old table.
    await db.query(`ALTER TABLE metrics.pg_stat_database__entity_cells ${PART_EXTREME_FACTS.map((f) => `DROP COLUMN "numbackends:${f}"`).join(", ")}`);
    expect((await migrate(db)).applied.map((m) => m.version)).toEqual([47]);
    const cell = async () =>
      (
        await db.query<Record<string, unknown>>(
          `SELECT "numbackends:part_n" AS n, ${PART_EXTREME_FACTS.map((f) => `"numbackends:${f}" AS ${f}`).join(", ")} FROM metrics.pg_stat_database__entity_cells WHERE entity = '{a}'`,
        )
      )[0];
    expect(await cell()).toEqual({ n: [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], part_last: null, part_min: null, part_max: null });
    // A sample added to the cell (a collector's next one) leaves them empty: the cell stays incomplete for them.
    await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows: [sample(2)] });
    expect(await cell()).toEqual({ n: [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3], part_last: null, part_min: null, part_max: null });
    // A cell of a new hour has them.
    await writeSamples(db, { connectionId: id, probe: "pg_stat_database", rows: [sample(61)] });
    const [fresh] = await db.query<Record<string, unknown>>(
      `SELECT ${PART_EXTREME_FACTS.map((f) => `"numbackends:${f}"[1] AS ${f}`).join(", ")} FROM metrics.pg_stat_database__entity_cells WHERE entity = '{a}' AND cell_start = $1`,
      [at(60)],
    );
    expect(fresh).toEqual({ part_last: 62, part_min: 62, part_max: 62 });
    await db.close();
  });
});

/**
 * Today's writer on a datastore made before migration 40, where a probe's rows are in `metrics.<probe>` and its
 * partitions are `<probe>_<YYYYMMDD>`: for the write only, table and partitions get the names the writer uses, and
 * an empty compressed history is beside them.
 */
async function writeBefore40(db: Driver, batch: SampleBatch): Promise<void> {
  const rename = async (from: string, to: string) => {
    await db.query(`ALTER TABLE metrics.${from} RENAME TO ${to}`);
    const parts = await db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'metrics.${to}'::regclass`,
    );
    for (const { name } of parts) await db.query(`ALTER TABLE metrics.${name} RENAME TO ${to}${name.slice(from.length)}`);
  };
  await rename(batch.probe, `${batch.probe}__raw`);
  for (const sql of createCompressedTable(findProbe(batch.probe)!)) await db.query(sql); // which the writer looks in
  try {
    await writeSamples(db, batch);
  } finally {
    await db.query(`DROP TABLE metrics.${batch.probe}__compressed`);
    await rename(`${batch.probe}__raw`, batch.probe);
  }
}
