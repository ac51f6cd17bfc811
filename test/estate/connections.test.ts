import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { createGroup, addMember, setConnectionGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { freePort } from "../support/postgres.ts";

const SECRET_PASSWORD = "s3cret-monitor-pass";
let store: TestDatastore;
let api: ReturnType<typeof client>;
let logs: Array<Record<string, unknown>>;
let root: string;
let manager: { id: number; token: string };
let reader: { id: number; token: string };
let pg17: URL;

beforeAll(async () => {
  store = await migratedDatastore("pg");
  const built = testApp(store.db);
  api = client(built.app);
  logs = built.logs;
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  manager = await userWithToken(store.db, "manager");
  reader = await userWithToken(store.db, "reader");
  const group = await createGroup(store.db, "connection managers", "");
  await store.db.query("INSERT INTO group_admin_permissions VALUES ($1, 'manage_connections')", [group.id]);
  await addMember(store.db, group.id, { type: "user", id: manager.id });
  pg17 = new URL(inject("pg17Url"));
});
afterAll(() => store.close());

const newConnection = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  host: "db.example.com",
  username: "monitor",
  password: SECRET_PASSWORD,
  ...extra,
});

describe("connections", () => {
  it("creates a connection owned by the caller, never returning the password", async () => {
    const created = await api("POST", "/api/v1/connections", { token: manager.token, body: newConnection("orders-primary", { description: "orders" }) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(Number),
      name: "orders-primary",
      port: 5432,
      database_name: "postgres",
      sslmode: "prefer",
      is_monitored: true,
      is_shared: false,
      owner_username: "manager",
      password_set: true,
    });
    expect(created.text).not.toContain(SECRET_PASSWORD);
    const [stored] = await store.db.query<{ password_secret: string }>("SELECT password_secret FROM connections WHERE id = $1", [created.body.id]);
    expect(stored.password_secret).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(stored.password_secret).not.toContain(SECRET_PASSWORD);
  });

  it.each([
    [{ host: "not a host!" }, /body field `host`: must be a host name or an IP address/],
    [{ port: 70000 }, /body field `port`/],
    [{ username: "" }, /body field `username`/],
    [{ sslmode: "sometimes" }, /body field `sslmode`/],
    [{ extra: 1 }, /unknown body field `extra`/],
  ])("rejects %o naming the field", async (change, message) => {
    const res = await api("POST", "/api/v1/connections", { token: manager.token, body: { ...newConnection("bad"), ...change } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it("answers 409 for a duplicate name and 404 for an unknown id", async () => {
    expect((await api("POST", "/api/v1/connections", { token: manager.token, body: newConnection("Orders-Primary") })).status).toBe(409);
    expect(await api("GET", "/api/v1/connections/987654", { token: root })).toMatchObject({ status: 404, body: { error: "connection 987654 not found" } });
  });

  it("shows each caller what it may see: owner, shared, group grant, scoped token", async () => {
    const own = (await api("POST", "/api/v1/connections", { token: manager.token, body: newConnection("private-one") })).body;
    const shared = (await api("POST", "/api/v1/connections", { token: manager.token, body: newConnection("shared-one", { is_shared: true }) })).body;
    const granted = (await api("POST", "/api/v1/connections", { token: manager.token, body: newConnection("granted-one") })).body;
    const names = async (token: string) => (await api("GET", "/api/v1/connections", { token })).body.map((c: { name: string }) => c.name);
    expect(await names(reader.token)).toEqual(["shared-one"]);
    expect(await api("GET", `/api/v1/connections/${own.id}`, { token: reader.token })).toMatchObject({ status: 404 });

    const readers = await createGroup(store.db, "readers", "");
    await addMember(store.db, readers.id, { type: "user", id: reader.id });
    await setConnectionGrants(store.db, readers.id, [{ connection_id: granted.id, access_level: "read" }]);
    expect(await names(reader.token)).toEqual(["granted-one", "shared-one"]);

    const scoped = await api("POST", "/api/v1/rbac/tokens", { token: root, body: { owner_username: "manager" } });
    await api("PUT", `/api/v1/rbac/tokens/${scoped.body.id}/scope`, {
      token: root,
      body: { connections: [{ connection_id: shared.id, access_level: "read" }] },
    });
    expect(await names(scoped.body.token)).toEqual(["shared-one"]);
    expect((await api("GET", `/api/v1/connections/${own.id}`, { token: scoped.body.token })).status).toBe(404);
  });

  it("lets the owner or manage_connections change a connection; sharing needs the permission", async () => {
    const conn = (await api("POST", "/api/v1/connections", { token: root, body: newConnection("owned-by-reader") })).body;
    await store.db.query("UPDATE connections SET owner_user_id = $1 WHERE id = $2", [reader.id, conn.id]);
    const renamed = await api("PUT", `/api/v1/connections/${conn.id}`, { token: reader.token, body: { description: "mine", port: 6432 } });
    expect(renamed).toMatchObject({ status: 200, body: { description: "mine", port: 6432, password_set: true } });
    expect((await api("PUT", `/api/v1/connections/${conn.id}`, { token: reader.token, body: { is_shared: true } })).status).toBe(403);
    expect((await api("PUT", `/api/v1/connections/${conn.id}`, { token: manager.token, body: { is_shared: true, password: null } })).body).toMatchObject({
      is_shared: true,
      password_set: false,
    });
    expect((await api("PUT", `/api/v1/connections/${conn.id}`, { token: manager.token, body: { name: "orders-primary" } })).status).toBe(409);
    const other = (await api("POST", "/api/v1/connections", { token: manager.token, body: newConnection("not-readers", { is_shared: true }) })).body;
    expect(await api("PUT", `/api/v1/connections/${other.id}`, { token: reader.token, body: { description: "x" } })).toMatchObject({ status: 403 });
    expect((await api("DELETE", `/api/v1/connections/${other.id}`, { token: reader.token })).status).toBe(403);
  });

  it("lists the databases of the live server, and says clearly when it cannot be reached", async () => {
    const live = await api("POST", "/api/v1/connections", {
      token: root,
      body: { name: "live", host: pg17.hostname, port: Number(pg17.port), username: "postgres", password: "postgres", sslmode: "disable" },
    });
    const dbs = await api("GET", `/api/v1/connections/${live.body.id}/databases`, { token: root });
    expect(dbs.status).toBe(200);
    expect(dbs.body).toContainEqual(expect.objectContaining({ name: "postgres", owner: "postgres", encoding: "UTF8", size_bytes: expect.any(Number) }));

    const port = await freePort();
    const dead = await api("POST", "/api/v1/connections", {
      token: root,
      body: { name: "dead", host: "127.0.0.1", port, username: "x", password: SECRET_PASSWORD, sslmode: "disable" },
    });
    const started = Date.now();
    const res = await api("GET", `/api/v1/connections/${dead.body.id}/databases`, { token: root });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatch(new RegExp(`cannot reach connection ${dead.body.id} \\(127.0.0.1:${port}\\)`));
    expect(res.text).not.toContain(SECRET_PASSWORD);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("remembers a current connection per credential", async () => {
    const shared = (await api("GET", "/api/v1/connections", { token: reader.token })).body.find((c: { name: string }) => c.name === "shared-one");
    expect((await api("GET", "/api/v1/connections/current", { token: reader.token })).status).toBe(404);
    expect(
      (await api("POST", "/api/v1/connections/current", { token: reader.token, body: { connection_id: shared.id, database_name: "app" } })).body,
    ).toMatchObject({ connection_id: shared.id, database_name: "app", name: "shared-one" });
    expect((await api("GET", "/api/v1/connections/current", { token: reader.token })).body.connection_id).toBe(shared.id);
    expect((await api("GET", "/api/v1/connections/current", { token: manager.token })).status).toBe(404);
    expect((await api("POST", "/api/v1/connections/current", { token: reader.token, body: { connection_id: 987654 } })).status).toBe(404);
    expect((await api("DELETE", "/api/v1/connections/current", { token: reader.token })).status).toBe(204);
    expect((await api("GET", "/api/v1/connections/current", { token: reader.token })).status).toBe(404);
  });

  it("deletes a connection with everything that belongs to it", async () => {
    const conn = (await api("POST", "/api/v1/connections", { token: root, body: newConnection("doomed", { is_shared: true }) })).body;
    await writeSamples(store.db, {
      connectionId: conn.id,
      probe: "pg_stat_database",
      rows: [0, 60].map((s) => ({ collected_at: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(), database_name: "app", xact_commit: s })),
    });
    await api("PUT", `/api/v1/probe-overrides/server/${conn.id}/pg_stat_database`, { token: root, body: { collection_interval_seconds: 30 } });
    await api("POST", "/api/v1/connections/current", { token: reader.token, body: { connection_id: conn.id } });
    const cluster = (await api("POST", "/api/v1/clusters", { token: root, body: { name: "doomed cluster" } })).body;
    await api("POST", `/api/v1/clusters/${cluster.id}/servers`, { token: root, body: { connection_id: conn.id } });

    expect((await api("DELETE", `/api/v1/connections/${conn.id}`, { token: root })).status).toBe(204);
    const count = async (sql: string) => (await store.db.query<{ n: number }>(sql, [conn.id]))[0].n;
    expect(await count("SELECT count(*)::int AS n FROM metrics.pg_stat_database WHERE connection_id = $1")).toBe(0);
    expect(await count("SELECT count(*)::int AS n FROM metrics.pg_stat_database__changes WHERE connection_id = $1")).toBe(0);
    expect(await count("SELECT count(*)::int AS n FROM probe_configs WHERE scope = 'server' AND scope_id = $1")).toBe(0);
    expect(await count("SELECT count(*)::int AS n FROM current_connections WHERE connection_id = $1")).toBe(0);
    expect((await api("GET", "/api/v1/connections/current", { token: reader.token })).status).toBe(404);
    expect((await api("GET", `/api/v1/clusters/${cluster.id}/servers`, { token: root })).body).toEqual([]);
    expect((await api("GET", "/api/v1/clusters", { token: root })).status).toBe(200);
    expect((await api("DELETE", `/api/v1/connections/${conn.id}`, { token: root })).status).toBe(404);
  });

  it("never puts a stored password in logs", () => {
    expect(JSON.stringify(logs)).not.toContain(SECRET_PASSWORD);
  });
});
