/**
 * top-queries and query-stats against a real PostgreSQL with pg_stat_statements: a known workload, collected
 * between steps, with pg_stat_statements_reset() in the middle. The change over the window is exact and
 * never negative; the reset interval contributes nothing (its calls are unknowable), as SPEC's reset rule says.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { collectOnce } from "../../src/collector/collect.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { testApp } from "../support/app.ts";
import { collectEvery, registerServer, monitoringConfig as config, quietLog as log, pause } from "../support/monitored.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

const WORKLOAD = "SELECT count(*) AS statements_live_workload FROM generate_series(1, $1::int)";

let server: TestServer;
let store: TestDatastore;
let monitored: pg.Client;
let conn: number;
let token: string;
let api: ReturnType<typeof client>;
let windowStart: string;

const run = async (times: number) => {
  for (let i = 0; i < times; i++) await monitored.query(WORKLOAD, [i + 1]);
};
const collect = async () => {
  await pause(1100);
  await collectOnce(store.db, config, log);
};

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  monitored = new pg.Client({ connectionString: server.url });
  await monitored.connect();
  await monitored.query("CREATE EXTENSION pg_stat_statements");
  await monitored.query("CREATE DATABASE legacy");
  const legacy = new pg.Client({ connectionString: server.url.replace(/\/postgres$/, "/legacy") });
  await legacy.connect();
  await legacy.query("CREATE EXTENSION pg_stat_statements VERSION '1.7'"); // before total_exec_time, toplevel and pg_stat_statements_info
  await legacy.end();

  store = await migratedDatastore("pg");
  conn = await registerServer(store.db, "live", server.url);
  await collectEvery(store.db, 1);
  await store.db.query("UPDATE probe_configs SET is_enabled = (probe_name = 'pg_stat_statements') WHERE scope = 'global'");
  token = (await userWithToken(store.db, "admin", { superuser: true })).token;
  api = client(testApp(store.db).app);

  await run(1); // the statement exists before the first sample, so the first interval counts
  windowStart = new Date(Date.now() - 1000).toISOString();
  await collect();
  await run(10);
  await collect(); // +10
  await run(5);
  await monitored.query("SELECT pg_stat_statements_reset()");
  await run(3);
  await collect(); // reset: this interval counts nothing
  await run(7);
  await collect(); // +7
}, 120_000);

afterAll(async () => {
  await monitored?.end();
  await store?.close();
  await server?.stop();
});

async function workloadQueryid(): Promise<string> {
  const { body } = await api("GET", `/api/v1/metrics/top-queries?connection_id=${conn}&limit=100`, { token });
  const found = body.find((q: { query: string }) => q.query.includes("statements_live_workload"));
  expect(found, JSON.stringify(body.map((q: { query: string }) => q.query))).toBeDefined();
  return found.queryid;
}

it("reports the latest sample's lifetime totals: only what ran since the reset", async () => {
  const queryid = await workloadQueryid();
  const { body } = await api("GET", `/api/v1/metrics/top-queries?connection_id=${conn}&queryid=${queryid}`, { token });
  expect(body).toHaveLength(1);
  expect(body[0]).toMatchObject({ calls: 10, database_name: "postgres" });
});

it("reports the window's change: 10 + 7 calls, the reset interval left out, never negative", async () => {
  const queryid = await workloadQueryid();
  const window = `time_range=custom&time_start=${windowStart}&time_end=${new Date().toISOString()}`;
  const top = await api("GET", `/api/v1/metrics/top-queries?connection_id=${conn}&queryid=${queryid}&${window}`, { token });
  expect(top.body[0].calls).toBe(17);
  const stats = await api("GET", `/api/v1/metrics/query-stats?connection_id=${conn}&queryid=${queryid}&${window}`, { token });
  expect(stats.status).toBe(200);
  expect(stats.body.totals.calls).toBe(17);
  expect(stats.body.totals.total_exec_time).toBeGreaterThan(0);
  expect(stats.body.totals.mean_exec_time).toBeCloseTo(stats.body.totals.total_exec_time / 17, 9);
  for (const p of stats.body.time_series) if (p.calls_per_sec !== null) expect(p.calls_per_sec).toBeGreaterThanOrEqual(0);
  expect(stats.body.query).toContain("statements_live_workload");
  expect(stats.body.totals.wal_bytes).toBeGreaterThanOrEqual(0); // measured on PostgreSQL 17 (extension 1.11), if zero for a read
});

it("leaves pglens's own probe statements out of the top queries unless exclude_collector=false", async () => {
  const all = await api("GET", `/api/v1/metrics/top-queries?connection_id=${conn}&limit=100&exclude_collector=false`, { token });
  expect(all.body.some((q: { query: string }) => q.query.includes("/* pglens collector */"))).toBe(true);
  for (const flag of ["", "&exclude_collector=true"]) {
    const others = await api("GET", `/api/v1/metrics/top-queries?connection_id=${conn}&limit=100${flag}`, { token });
    expect(others.body.some((q: { query: string }) => q.query.includes("pglens collector"))).toBe(false);
    expect(others.body.some((q: { query: string }) => q.query.includes("statements_live_workload"))).toBe(true);
  }
});

it("collects pg_stat_statements 1.7 with the older column names and no reset time", async () => {
  const rows = await store.db.query<{ n: number; with_reset: number; timed: number; with_wal: number }>(
    `SELECT count(*)::int AS n, count(stats_reset)::int AS with_reset, count(*) FILTER (WHERE total_exec_time > 0)::int AS timed, count(wal_bytes)::int AS with_wal
       FROM metrics.pg_stat_statements WHERE connection_id = $1 AND database_name = 'legacy'`,
    [conn],
  );
  expect(rows[0].n).toBeGreaterThan(0);
  expect(rows[0].with_reset).toBe(0);
  expect(rows[0].with_wal).toBe(0); // 1.7 counts no WAL
  expect(rows[0].timed).toBeGreaterThan(0);
  const [status] = await store.db.query<{ last_status: string }>(
    "SELECT last_status FROM probe_schedule WHERE connection_id = $1 AND probe_name = 'pg_stat_statements'",
    [conn],
  );
  expect(status.last_status).toBe("ok");
});
