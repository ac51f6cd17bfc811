/**
 * Read replicas on Workers, through Miniflare's local Hyperdrive: HYPERDRIVE reaches a real PostgreSQL primary,
 * HYPERDRIVE_READ its streaming standby. Reads land on the standby (a paused standby shows its older view); a
 * write through the Worker answers its WAL position, and a request that carries it (header or cookie) reads the
 * write from the primary until the standby has replayed it; a stopped standby makes reads fall back without
 * errors; /health shows the replica.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPg } from "../drivers/pg.ts";
import type { Driver } from "../drivers/types.ts";
import { migrate } from "../src/datastore/migrate.ts";
import { bearer, userWithToken } from "./support/auth.ts";
import { addConnection } from "./support/datastore.ts";
import { pause } from "./support/monitored.ts";
import { createTestDatabase, startEmbeddedPostgres, type TestServer } from "./support/postgres.ts";
import { type Standby, startStandby } from "./support/standby.ts";
import { startTcpRelay, type TcpRelay } from "./support/tcp-relay.ts";
import { startWorker, type TestWorker } from "./support/worker.ts";

let primary: TestServer;
let standby: Standby | undefined;
let standbyAdmin: pg.Client;
let db: Driver;
let worker: TestWorker;
let relay: TcpRelay;
let alertId: number;
let writer: Record<string, string>;
let reader: Record<string, string>;

async function caughtUp() {
  const [{ lsn }] = await db.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
  for (let i = 0; i < 200; i++) {
    if ((await standbyAdmin.query("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done", [lsn])).rows[0].done) return;
    await pause(100);
  }
  throw new Error("the standby did not catch up");
}

/** The test alert as the Worker lists it to a caller. */
async function alertSeen(who: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await worker.fetch("/api/v1/alerts", { headers: { ...who, ...headers } });
  expect(res.status).toBe(200);
  const { alerts } = (await res.json()) as { alerts: Array<{ id: number; title: string; status: string }> };
  return alerts.find((a) => a.id === alertId);
}

async function whilePaused(work: () => Promise<void>) {
  await standbyAdmin.query("SELECT pg_wal_replay_pause()");
  try {
    await work();
  } finally {
    await standbyAdmin.query("SELECT pg_wal_replay_resume()");
  }
  await caughtUp();
}

beforeAll(async () => {
  primary = await startEmbeddedPostgres({ persistent: true });
  const database = await createTestDatabase(primary.url);
  db = openPg(database.url);
  await migrate(db);
  standby = await startStandby(primary);
  // Through a relay: Miniflare's own proxy throws in this process when its target refuses connections.
  relay = await startTcpRelay(standby.port);
  const standbyUrl = new URL(database.url);
  standbyUrl.port = String(relay.port);
  standbyAdmin = new pg.Client({ connectionString: standby.url });
  await standbyAdmin.connect();
  const connection = await addConnection(db, "main");
  [{ id: alertId }] = await db.query<{ id: number }>(
    "INSERT INTO alerts (alert_type, connection_id, severity, title, status) VALUES ('connection', $1, 'critical', 'main is down', 'active') RETURNING id::int",
    [connection],
  );
  writer = bearer((await userWithToken(db, "writer", { superuser: true })).token);
  reader = bearer((await userWithToken(db, "reader", { superuser: true })).token);
  await caughtUp();
  worker = await startWorker({}, { hyperdrives: { HYPERDRIVE: database.url, HYPERDRIVE_READ: standbyUrl.toString() } });
}, 120_000);

afterAll(async () => {
  await worker?.dispose();
  await relay?.close();
  await db?.close();
  await standbyAdmin?.end().catch(() => {});
  await standby?.stop();
  await primary?.stop();
});

it("reads from the standby, and shows it in /health", async () => {
  const health = await worker.fetch("/health");
  expect(await health.json()).toMatchObject({ status: "ok", replicas: [{ replica: 1, status: "ok", lag_seconds: 0 }] });
  await whilePaused(async () => {
    await db.query("UPDATE alerts SET title = 'main is down again' WHERE id = $1", [alertId]);
    expect((await alertSeen(reader))?.title).toBe("main is down");
  });
  expect((await alertSeen(reader))?.title).toBe("main is down again");
});

it("answers a write's WAL position; a request carrying it reads the write from the primary until the standby has it", async () => {
  let lsn = "";
  await whilePaused(async () => {
    const ack = await worker.fetch("/api/v1/alerts/acknowledge", {
      method: "POST",
      headers: { ...writer, "content-type": "application/json" },
      body: JSON.stringify({ alert_id: alertId, message: "on it" }),
    });
    expect(ack.status).toBe(200);
    lsn = ack.headers.get("pglens-lsn")!;
    expect(lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const cookie = ack.headers.get("set-cookie")!.split(";")[0];
    expect(cookie).toBe(`pglens_lsn=${lsn}`);
    // Another caller, as if served by another isolate: the standby's older view unless they bring the position.
    expect((await alertSeen(reader))?.status).toBe("active");
    expect((await alertSeen(reader, { "Pglens-Lsn": lsn }))?.status).toBe("acknowledged");
    expect((await alertSeen(reader, { cookie }))?.status).toBe("acknowledged");
    // The writer's own isolate remembers them.
    expect((await alertSeen(writer))?.status).toBe("acknowledged");
  });
  // Replayed now: the position no longer keeps reads off the standby (a change it has not replayed shows it).
  await whilePaused(async () => {
    await db.query("UPDATE alerts SET title = 'main is down, acknowledged' WHERE id = $1", [alertId]);
    expect((await alertSeen(reader, { "Pglens-Lsn": lsn }))?.title).toBe("main is down again");
  });
});

it("falls back to the primary without errors when the standby stops, and says so in /health", async () => {
  await standbyAdmin.end();
  await standby?.stop();
  standby = undefined;
  expect((await alertSeen(reader))?.title).toBe("main is down, acknowledged");
  const health = await worker.fetch("/health");
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ status: "ok", replicas: [{ replica: 1, status: "down", lag_seconds: null }] });
});
