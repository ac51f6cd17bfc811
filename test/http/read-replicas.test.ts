/**
 * Read replicas with a real PostgreSQL primary and its streaming standby: reads of alerts (REST and MCP) land on
 * the standby and not on the primary; a caller who has just written reads their write from the primary while
 * others still read the standby, and another instance reads it from the primary when given the write's WAL position
 * (header or cookie) until the standby has replayed it; a replica whose replay is paused beyond datastore.max_replica_lag_seconds is
 * skipped; a stopped standby makes reads fall back without errors; /health shows each replica's state.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { resolveConfig } from "../../src/config.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { openReadReplicas } from "../../src/http/read-db.ts";
import type { ReadReplicas } from "../../src/http/context.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { counting } from "../support/counting-driver.ts";
import { addConnection } from "../support/datastore.ts";
import { pause } from "../support/monitored.ts";
import { createTestDatabase, startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";
import { type Standby, startStandby } from "../support/standby.ts";
import { typedClient } from "../support/typed-client.ts";

let primary: TestServer;
let standby: Standby | undefined;
let primaryUrl: string;
let standbyUrl: string;
let db: Driver;
let standbyAdmin: pg.Client;
let alertId: number;
let writer: string;
let reader: string;
const opened: ReadReplicas[] = [];

/** The app over the primary, reading from the standby (maxLag: datastore.max_replica_lag_seconds). */
function appWithReplica(maxLag: number) {
  const { driver, statements } = counting(db);
  const config = resolveConfig(
    { datastore: { url: primaryUrl, read_urls: [standbyUrl], max_replica_lag_seconds: maxLag } },
    { PGLENS_SECRET: "test secret for sealing passwords" },
  );
  // One replica: its statements are the ones the set sends to the standby.
  let onReplica: string[] = [];
  const replicas = openReadReplicas(config, driver.kind, (url) => {
    const replica = counting(openPg(url));
    onReplica = replica.statements;
    return replica.driver;
  })!;
  opened.push(replicas);
  const { app } = testApp(driver, { config: { datastore: config.datastore }, deps: { datastore: { open: () => driver, replicas } } });
  return { app, statements, lagChecks: () => onReplica.filter((sql) => sql.includes("pg_last_wal_replay_lsn")).length };
}

const standbySessions = async () =>
  Number((await standbyAdmin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1", [new URL(standbyUrl).pathname.slice(1)])).rows[0].n);

/** Waits until the standby has replayed everything the primary wrote so far. */
async function caughtUp() {
  const [{ lsn }] = await db.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
  for (let i = 0; i < 200; i++) {
    const { rows } = await standbyAdmin.query("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done", [lsn]);
    if (rows[0].done) return;
    await pause(100);
  }
  throw new Error("the standby did not catch up");
}

beforeAll(async () => {
  primary = await startEmbeddedPostgres({ persistent: true });
  const database = await createTestDatabase(primary.url);
  const migrating = openPg(database.url);
  await migrate(migrating);
  await migrating.close();
  standby = await startStandby(primary);
  primaryUrl = database.url;
  const u = new URL(database.url);
  u.port = String(standby.port);
  standbyUrl = u.toString();
  standbyAdmin = new pg.Client({ connectionString: standby.url });
  await standbyAdmin.connect();
  db = openPg(primaryUrl);
  const connection = await addConnection(db, "main");
  [{ id: alertId }] = await db.query<{ id: number }>(
    "INSERT INTO alerts (alert_type, connection_id, severity, title, status) VALUES ('connection', $1, 'critical', 'main is down', 'active') RETURNING id::int",
    [connection],
  );
  writer = (await userWithToken(db, "writer", { superuser: true })).token;
  reader = (await userWithToken(db, "reader", { superuser: true })).token;
  await caughtUp();
}, 120_000);

afterAll(async () => {
  for (const r of opened) await r.set.close();
  await db?.close();
  await standbyAdmin?.end().catch(() => {});
  await standby?.stop();
  await primary?.stop();
});

const alertStatus = async (app: ReturnType<typeof appWithReplica>["app"], token: string) => {
  const { data, error } = await typedClient(app, token).GET("/api/v1/alerts", { params: { query: {} } });
  expect(error).toBeUndefined();
  return data!.alerts.find((a) => a.id === alertId)?.status;
};

it("refuses read replicas beside the embedded datastore, which has none", async () => {
  const { openPglite } = await import("../../drivers/pglite.ts");
  const embedded = await openPglite();
  try {
    const config = resolveConfig({ datastore: { read_urls: [standbyUrl] } }, {});
    expect(() => openReadReplicas(config, embedded.kind, (url) => openPg(url))).toThrow(/`datastore.read_urls`: the embedded datastore has no replicas/);
  } finally {
    await embedded.close();
  }
});

describe("reads with a streaming standby", () => {
  it("lists alerts from the standby, over REST and MCP, and not from the primary", async () => {
    const { app, statements } = appWithReplica(600);
    const before = await standbySessions();
    expect(await alertStatus(app, reader)).toBe("active");
    const tool = await typedClient(app, reader).POST("/api/v1/mcp/tools/call", { body: { name: "list_alerts", arguments: {} } });
    expect(JSON.stringify(tool.data)).toContain("main is down");
    expect(await standbySessions()).toBeGreaterThan(before);
    // The primary answered who the caller is, never the alert lists.
    expect(statements.some((sql) => /\bFROM alerts\b/.test(sql))).toBe(false);
    expect(statements.length).toBeGreaterThan(0);
    const { data } = await typedClient(app).GET("/health");
    expect(data?.replicas).toEqual([expect.objectContaining({ replica: 1, status: "ok", lag_seconds: 0 })]);
  });

  it("shows a caller their own write at once while others read the standby's older view", async () => {
    const { app } = appWithReplica(600);
    await standbyAdmin.query("SELECT pg_wal_replay_pause()");
    try {
      const ack = await typedClient(app, writer).POST("/api/v1/alerts/acknowledge", { body: { alert_id: alertId, message: "on it" } });
      expect(ack.response.status).toBe(200);
      expect(await alertStatus(app, writer)).toBe("acknowledged");
      // The reader's MCP call is a POST that writes nothing: their reads stay on the standby.
      await typedClient(app, reader).POST("/api/v1/mcp/tools/call", { body: { name: "list_alerts", arguments: {} } });
      expect(await alertStatus(app, reader)).toBe("active");
    } finally {
      await standbyAdmin.query("SELECT pg_wal_replay_resume()");
    }
    await caughtUp();
    expect(await alertStatus(app, reader)).toBe("acknowledged");
  });

  it("lets a caller carry their write's WAL position to another instance, whose reads then wait for a replica that has it", async () => {
    const [first, second] = [appWithReplica(600), appWithReplica(600)];
    const statusVia = async (app: typeof first.app, headers: Record<string, string>) => {
      const { data, error } = await typedClient(app, writer).GET("/api/v1/alerts", { params: { query: {} }, headers });
      expect(error).toBeUndefined();
      return data!.alerts.find((a) => a.id === alertId)?.status;
    };
    await db.query("UPDATE alerts SET status = 'active' WHERE id = $1", [alertId]);
    await caughtUp();
    await standbyAdmin.query("SELECT pg_wal_replay_pause()");
    let lsn: string;
    let cookie: string;
    try {
      const ack = await typedClient(first.app, writer).POST("/api/v1/alerts/acknowledge", { body: { alert_id: alertId, message: "on it" } });
      expect(ack.response.status).toBe(200);
      lsn = ack.response.headers.get("pglens-lsn")!;
      expect(lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      cookie = ack.response.headers.get("set-cookie")!;
      expect(cookie).toMatch(new RegExp(`^pglens_lsn=${lsn}; Max-Age=605; Path=/; HttpOnly; SameSite=Lax$`));
      // The second instance does not know the caller wrote: without the position it reads the paused standby.
      expect(await statusVia(second.app, {})).toBe("active");
      expect(await statusVia(second.app, { "Pglens-Lsn": lsn })).toBe("acknowledged");
      expect(await statusVia(second.app, { cookie: cookie.split(";")[0] })).toBe("acknowledged");
      const bad = await typedClient(second.app, writer).GET("/api/v1/alerts", { params: { query: {} }, headers: { "Pglens-Lsn": "latest" } });
      expect(bad.response.status).toBe(400);
      expect(bad.error).toEqual({ error: expect.stringContaining("Pglens-Lsn must be a WAL position") });
    } finally {
      await standbyAdmin.query("SELECT pg_wal_replay_resume()");
    }
    await caughtUp();
    // Once the standby has the write, the same position lets it answer.
    second.statements.length = 0;
    expect(await statusVia(second.app, { "Pglens-Lsn": lsn })).toBe("acknowledged");
    expect(second.statements.some((sql) => /\bFROM alerts\b/.test(sql))).toBe(false);
  });

  it("skips a replica whose replay lags beyond max_replica_lag_seconds, and uses it again once it catches up", async () => {
    const { app, statements } = appWithReplica(1);
    const health = async () => (await typedClient(app).GET("/health")).data?.replicas?.[0];
    await standbyAdmin.query("SELECT pg_wal_replay_pause()");
    try {
      // A write by someone else (the alerter) that the paused standby does not have.
      await db.query("UPDATE alerts SET status = 'active' WHERE id = $1", [alertId]);
      await pause(1500);
      expect(await health()).toMatchObject({ status: "lagging", lag_seconds: expect.any(Number) });
      statements.length = 0;
      expect(await alertStatus(app, reader)).toBe("active");
      expect(statements.some((sql) => /\bFROM alerts\b/.test(sql))).toBe(true);
    } finally {
      await standbyAdmin.query("SELECT pg_wal_replay_resume()");
    }
    await caughtUp();
    // The next check (at most every 5 s) finds it current again.
    await expect.poll(health, { timeout: 10_000, interval: 500 }).toMatchObject({ status: "ok", lag_seconds: 0 });
    statements.length = 0;
    expect(await alertStatus(app, reader)).toBe("active");
    expect(statements.some((sql) => /\bFROM alerts\b/.test(sql))).toBe(false);
  });

  it("skips a replica that lost its primary, though it replayed all it had received", async () => {
    const { app, statements } = appWithReplica(1);
    const health = async () => (await typedClient(app).GET("/health")).data?.replicas?.[0];
    const [{ setting }] = (await standbyAdmin.query("SELECT setting FROM pg_settings WHERE name = 'primary_conninfo'")).rows;
    // Pointed at a port nothing listens on: the standby stops receiving, with nothing left to replay.
    await standbyAdmin.query("ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=1 connect_timeout=1'");
    await standbyAdmin.query("SELECT pg_reload_conf()");
    try {
      await db.query("UPDATE alerts SET status = 'active' WHERE id = $1", [alertId]);
      await expect.poll(health, { timeout: 15_000, interval: 500 }).toMatchObject({ status: "lagging" });
      statements.length = 0;
      expect(await alertStatus(app, reader)).toBe("active");
      expect(statements.some((sql) => /\bFROM alerts\b/.test(sql))).toBe(true);
    } finally {
      await standbyAdmin.query(`ALTER SYSTEM SET primary_conninfo = '${setting.replace(/'/g, "''")}'`);
      await standbyAdmin.query("SELECT pg_reload_conf()");
    }
    await caughtUp();
    await expect.poll(health, { timeout: 15_000, interval: 500 }).toMatchObject({ status: "ok", lag_seconds: 0 });
  });

  it("answers /health from a check younger than 5 s, so calling it often does not query the replicas as often", async () => {
    const { app, lagChecks } = appWithReplica(600);
    for (let i = 0; i < 10; i++) expect((await typedClient(app).GET("/health")).data?.replicas?.[0]?.status).toBe("ok");
    expect(lagChecks()).toBe(1);
  });

  it("falls back to the primary without errors when the standby stops, and says so in /health", async () => {
    const { app, statements } = appWithReplica(600);
    expect(await alertStatus(app, reader)).toBe("active");
    await standbyAdmin.end();
    await standby?.stop();
    standby = undefined;
    statements.length = 0;
    expect(await alertStatus(app, reader)).toBe("active");
    expect(statements.some((sql) => /\bFROM alerts\b/.test(sql))).toBe(true);
    const res = await typedClient(app).GET("/health");
    expect(res.response.status).toBe(200);
    expect(res.data?.replicas).toEqual([expect.objectContaining({ replica: 1, status: "down", error: "cannot connect", lag_seconds: null })]);
  });
});
