import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { addConnection } from "../support/datastore.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { startWorker, type TestWorker } from "../support/worker.ts";

const ADMIN_PASSWORD = "workers admin passphrase";
let database: { url: string; drop(): Promise<void> };
let db: Driver;
let worker: TestWorker;
let a: number;
let b: number;

beforeAll(async () => {
  database = await createTestDatabase(inject("pg17Url"));
  db = openPg(database.url);
  await migrate(db);
  a = await addConnection(db, "a");
  b = await addConnection(db, "b");
  await writeSamples(db, { connectionId: a, probe: "pg_stat_wal", rows: [{ collected_at: "2026-01-01T00:00:30Z", wal_records: 1 }] });
  worker = await startWorker({ PGLENS_DATASTORE_URL: database.url, PGLENS_ADMIN_USERNAME: "admin", PGLENS_ADMIN_PASSWORD: ADMIN_PASSWORD });
});
afterAll(async () => {
  await worker.dispose();
  await db.close();
  await database.drop();
});

const call = async (method: string, path: string, token?: string, body?: unknown) => {
  const res = await worker.fetch(path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  return { status: res.status, body: res.status === 204 ? null : await res.json(), cookie: res.headers.get("set-cookie") };
};

it("bootstraps the first superuser, logs in, and runs session, API token and scoped token flows under workerd", async () => {
  expect((await call("GET", "/health")).status).toBe(200); // first request: migrations and bootstrap
  const login = await call("POST", "/api/v1/auth/login", undefined, { username: "admin", password: ADMIN_PASSWORD });
  expect(login.status).toBe(200);
  expect(login.cookie).toMatch(/HttpOnly/);
  const session = login.body.token as string;
  expect((await call("GET", "/api/v1/user/info", session)).body).toMatchObject({ username: "admin", is_superuser: true, authenticated_via: "session" });

  const created = await call("POST", "/api/v1/rbac/tokens", session, { note: "worker test" });
  expect(created.status).toBe(201);
  const token = created.body.token as string;
  const query = (id: number, t: string) => call("GET", `/api/v1/metrics/query?probe_name=pg_stat_wal&connection_id=${id}&metrics=wal_records`, t);
  expect((await query(b, token)).status).toBe(200);
  expect(
    (await call("PUT", `/api/v1/rbac/tokens/${created.body.id}/scope`, session, { connections: [{ connection_id: a, access_level: "read" }] })).status,
  ).toBe(200);
  expect((await query(a, token)).status).toBe(200);
  expect(await query(b, token)).toMatchObject({
    status: 403,
    body: { error: `you may not read connection ${b}: ask an administrator for a connection privilege on it` },
  });

  expect((await call("POST", "/api/v1/auth/logout", session)).status).toBe(200);
  expect((await call("GET", "/api/v1/user/info", session)).status).toBe(401);
  expect((await call("GET", "/api/v1/user/info", token)).status).toBe(200);
  // Sessions live in the datastore: another instance (Node, here) sees the same state.
  expect((await db.query("SELECT count(*)::int AS n FROM sessions"))[0]).toEqual({ n: 0 });
});
