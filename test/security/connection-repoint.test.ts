/**
 * Finding 3: a stored password must not follow a connection to an endpoint its owner did not choose, and is
 * never sent in clear text over a link without TLS unless the connection allows it. The fake server records
 * every password message it receives.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { addMember, createGroup, setAdminGrants, setMcpGrants } from "../../src/datastore/groups.ts";
import { sslOption } from "../../src/monitored/client.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { startFakePostgres, type FakePostgres } from "../support/fake-postgres.ts";
import { client } from "../support/http.ts";
import { monitorRoleUrl } from "../support/monitored.ts";

let store: TestDatastore;
let fake: FakePostgres;
let send: ReturnType<typeof client>;
let owner: string;
let manager: string;

const STORED = "the owner's stored password";

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  fake = await startFakePostgres();
  send = client(testApp(store.db).app);
  owner = (await userWithToken(store.db, "owner", { superuser: false })).token;
  const m = await userWithToken(store.db, "manager");
  const group = await createGroup(store.db, "connection-managers", "");
  await setAdminGrants(store.db, group.id, ["manage_connections"]);
  await setMcpGrants(store.db, group.id, ["get_schema_info"]);
  await addMember(store.db, group.id, { type: "user", id: m.id });
  manager = m.token;
  // The owner may register connections and list databases too.
  const [o] = await store.db.query<{ id: number }>("SELECT id FROM users WHERE username = 'owner'");
  await addMember(store.db, group.id, { type: "user", id: o.id });
});
afterAll(async () => {
  await fake.close();
  await store.close();
});

describe("re-pointing a connection", () => {
  it("needs the password again unless the caller owns the connection", async () => {
    const created = await send("POST", "/api/v1/connections", {
      token: owner,
      body: { name: "prod", host: "127.0.0.1", port: 1, username: "app", password: STORED },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    for (const change of [
      { host: "localhost", port: fake.port },
      { port: fake.port },
      { username: "postgres" },
      { database_name: "other" },
      { sslmode: "disable" },
      { allow_cleartext_password: true },
    ]) {
      const moved = await send("PUT", `/api/v1/connections/${id}`, { token: manager, body: change });
      expect(moved.status, JSON.stringify(change)).toBe(400);
      expect(moved.body.error).toContain("give `password` in the same request");
    }
    // Harmless changes need nothing more, and an attacker's own password is theirs to send.
    expect((await send("PUT", `/api/v1/connections/${id}`, { token: manager, body: { description: "checked" } })).status).toBe(200);
    expect(
      (await send("PUT", `/api/v1/connections/${id}`, { token: manager, body: { host: "127.0.0.1", port: fake.port, password: "manager's own" } })).status,
    ).toBe(200);
    expect((await send("GET", `/api/v1/connections/${id}/databases`, { token: manager })).status).toBe(502);
    expect(fake.passwords).not.toContain(STORED);
  });

  it("needs the live login's password again too, and never shows either password", async () => {
    const LIVE_STORED = "the owner's live password";
    const created = await send("POST", "/api/v1/connections", {
      token: owner,
      body: { name: "with-live-login", host: "127.0.0.1", port: 1, username: "app", password: STORED, live_username: "monitor", live_password: LIVE_STORED },
    });
    expect(created.body).toMatchObject({ live_username: "monitor", live_password_set: true, password_set: true });
    expect(created.text).not.toContain(LIVE_STORED);
    const id = created.body.id;
    const moved = await send("PUT", `/api/v1/connections/${id}`, { token: manager, body: { host: "127.0.0.1", port: fake.port, password: "manager's own" } });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toContain("give `live_password` in the same request");
    expect((await send("PUT", `/api/v1/connections/${id}`, { token: manager, body: { live_username: "someone" } })).body.error).toContain("`live_password`");
    const both = await send("PUT", `/api/v1/connections/${id}`, {
      token: manager,
      body: { host: "127.0.0.1", port: fake.port, password: "manager's own", live_password: "manager's live" },
    });
    expect(both.status).toBe(200);
    const tool = await send("POST", "/api/v1/mcp/tools/call", { token: manager, body: { name: "get_schema_info", arguments: { connection_id: id } } });
    expect(tool.status).toBe(200);
    expect(fake.passwords).not.toContain(LIVE_STORED);
    expect((await send("GET", `/api/v1/connections/${id}`, { token: manager })).text).not.toMatch(/manager's (own|live)/);
  });

  it("lets the owner re-point it, but never sends the password in clear text without TLS unless allowed", async () => {
    const created = await send("POST", "/api/v1/connections", {
      token: owner,
      body: { name: "owned", host: "127.0.0.1", port: 1, username: "app", password: STORED },
    });
    const id = created.body.id;
    expect((await send("PUT", `/api/v1/connections/${id}`, { token: owner, body: { port: fake.port } })).status).toBe(200);
    const before = fake.sessions;
    const live = await send("GET", `/api/v1/connections/${id}/databases`, { token: owner });
    expect(live.status).toBe(502);
    expect(live.body.error).toContain("asked for the password in clear text over a connection without TLS");
    expect(fake.sessions).toBe(before + 1);
    expect(fake.passwords).not.toContain(STORED);
    // The check is real: allowed explicitly, the password does go out.
    expect((await send("PUT", `/api/v1/connections/${id}`, { token: owner, body: { allow_cleartext_password: true } })).status).toBe(200);
    await send("GET", `/api/v1/connections/${id}/databases`, { token: owner });
    expect(fake.passwords).toContain(STORED);
  });
});

describe("TLS options", () => {
  const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  it("verify the certificate chain for verify-ca and the host too for verify-full, with the connection's CA bundle", () => {
    expect(sslOption({ sslmode: "prefer", ssl_root_cert: null })).toBe(false);
    expect(sslOption({ sslmode: "require", ssl_root_cert: null })).toEqual({ rejectUnauthorized: false });
    const ca = sslOption({ sslmode: "verify-ca", ssl_root_cert: PEM }) as { ca: string; rejectUnauthorized: boolean; checkServerIdentity: () => unknown };
    expect(ca).toMatchObject({ ca: PEM, rejectUnauthorized: true });
    expect(ca.checkServerIdentity()).toBeUndefined();
    expect(sslOption({ sslmode: "verify-full", ssl_root_cert: PEM })).toEqual({ ca: PEM, rejectUnauthorized: true });
    expect(sslOption({ sslmode: "require", ssl_root_cert: PEM })).toMatchObject({ ca: PEM, rejectUnauthorized: true });
  });

  it("accepts a CA bundle only as PEM", async () => {
    const bad = await send("POST", "/api/v1/connections", {
      token: owner,
      body: { name: "tls", host: "db.example", sslmode: "verify-full", ssl_root_cert: "not a certificate" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("ssl_root_cert");
    const good = await send("POST", "/api/v1/connections", {
      token: owner,
      body: { name: "tls", host: "db.example", username: "app", sslmode: "verify-full", ssl_root_cert: PEM },
    });
    expect(good.body).toMatchObject({ sslmode: "verify-full", ssl_root_cert: PEM, allow_cleartext_password: false });
  });
});

describe("registering a powerful login (finding 4)", () => {
  it("warns that the live tools will refuse it, and says nothing for a pg_monitor login", async () => {
    const su = new URL(inject("pg17Url"));
    const body = (url: URL, name: string) => ({
      name,
      host: url.hostname,
      port: Number(url.port),
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      sslmode: "disable",
    });
    const superuser = await send("POST", "/api/v1/connections", { token: owner, body: body(su, "superuser-login") });
    expect(superuser.status).toBe(201);
    expect(superuser.body.warning).toBe(
      `connection ${superuser.body.id}'s live tools log in as postgres (superuser): they will refuse it; set live_username to a pg_monitor login (or monitor with one)`,
    );
    const monitorUrl = new URL(await monitorRoleUrl(inject("pg17Url")));
    const monitor = await send("POST", "/api/v1/connections", { token: owner, body: body(monitorUrl, "monitor-login") });
    expect(monitor.status).toBe(201);
    expect(monitor.body.warning).toBeUndefined();
    // A superuser login for the collector with a pg_monitor login for the live tools: no warning.
    const split = await send("PUT", `/api/v1/connections/${superuser.body.id}`, {
      token: owner,
      body: { live_username: decodeURIComponent(monitorUrl.username), live_password: decodeURIComponent(monitorUrl.password) },
    });
    expect(split.status).toBe(200);
    expect(split.body.warning).toBeUndefined();
    // And a live login that is itself a superuser is called out.
    const wrong = await send("PUT", `/api/v1/connections/${superuser.body.id}`, {
      token: owner,
      body: { live_username: "postgres", live_password: decodeURIComponent(su.password) },
    });
    expect(wrong.body.warning).toContain("make live_username a pg_monitor role");
  });
});
