import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { testApp } from "../support/app.ts";
import { bearer, userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

let store: TestDatastore;
let app: ReturnType<typeof testApp>["app"];
let logs: Array<Record<string, unknown>>;
let root: string;
const PASSWORD = "tangerine submarine 42";

const send = async (method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
  const res = await app.request(path, {
    method,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    headers: { "content-type": "application/json", ...(options.token ? bearer(options.token) : {}), ...options.headers },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, text };
};

beforeAll(async () => {
  store = await migratedDatastore("pg");
  ({ app, logs } = testApp(store.db, {
    config: {
      auth: {
        session_hours: 24,
        max_failed_logins_per_address: 8,
        max_failed_logins_per_account: 4,
        failure_window_minutes: 15,
        lockout_after_failures: 6,
        cache_seconds: 5,
      },
    },
  }));
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
});
afterAll(() => store.close());

describe("sessions", () => {
  it("log in, use the token as bearer or cookie, log out", async () => {
    expect((await send("POST", "/api/v1/rbac/users", { token: root, body: { username: "alice", password: PASSWORD, display_name: "Alice" } })).status).toBe(
      201,
    );
    const login = await send("POST", "/api/v1/auth/login", { body: { username: "alice", password: PASSWORD } });
    expect(login.status).toBe(200);
    expect(login.body.token).toMatch(/^pglens_session_/);
    expect(Date.parse(login.body.expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const cookie = login.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^pglens_session=pglens_session_[\w-]+;/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);

    const viaBearer = await send("GET", "/api/v1/user/info", { token: login.body.token });
    expect(viaBearer.body).toMatchObject({ username: "alice", is_superuser: false, authenticated_via: "session", groups: [] });
    const viaCookie = await send("GET", "/api/v1/user/info", { headers: { cookie: `pglens_session=${login.body.token}` } });
    expect(viaCookie.status).toBe(200);

    const logout = await send("POST", "/api/v1/auth/logout", { token: login.body.token });
    expect(logout.status).toBe(200);
    expect(logout.headers.get("set-cookie")).toMatch(/pglens_session=;.*Max-Age=0/);
    const after = await send("GET", "/api/v1/user/info", { token: login.body.token });
    expect(after).toMatchObject({ status: 401, body: { error: "invalid or expired token" } });
    // With the session already gone (or none at all), logout still clears the cookie.
    for (const headers of [{ cookie: `pglens_session=${login.body.token}` }, {}] as Array<Record<string, string>>) {
      const again = await send("POST", "/api/v1/auth/logout", { headers });
      expect(again).toMatchObject({ status: 200, body: { message: "no active session; the session cookie is cleared" } });
      expect(again.headers.get("set-cookie")).toMatch(/pglens_session=;.*Max-Age=0/);
    }
  });

  it("answers the same 401 for an unknown user and a wrong password", async () => {
    const unknown = await send("POST", "/api/v1/auth/login", { body: { username: "nosuchuser", password: PASSWORD } });
    const wrong = await send("POST", "/api/v1/auth/login", { body: { username: "alice", password: "not the password at all" } });
    expect(unknown).toMatchObject({ status: 401, body: { error: "invalid username or password" } });
    expect(wrong.body).toEqual(unknown.body);
    expect((await send("POST", "/api/v1/auth/login", { body: { username: "alice" } })).body.error).toMatch(/body field `password`/);
  });

  it("refuses an expired session", async () => {
    const login = await send("POST", "/api/v1/auth/login", { body: { username: "alice", password: PASSWORD } });
    await store.db.query("UPDATE sessions SET expires_at = now() - interval '1 second'");
    expect((await send("GET", "/api/v1/user/info", { token: login.body.token })).status).toBe(401);
  });
});

describe("abuse resistance", () => {
  it("limits failed logins per account with 429 and Retry-After, then locks the account until an admin re-enables it", async () => {
    const created = await send("POST", "/api/v1/rbac/users", { token: root, body: { username: "bob", password: PASSWORD } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await send("POST", "/api/v1/auth/login", { body: { username: "bob", password: `wrong password ${i}!` } })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    const limited = await send("POST", "/api/v1/auth/login", { body: { username: "bob", password: PASSWORD } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(800);
    expect(limited.body.error).toMatch(/too many failed logins/);

    // Past the throttle window, further failures lock the account: the right password no longer works.
    await store.db.query("DELETE FROM login_throttle");
    for (let i = 0; i < 2; i++) await send("POST", "/api/v1/auth/login", { body: { username: "bob", password: `wrong again ${i}!!` } });
    await store.db.query("DELETE FROM login_throttle");
    expect((await send("POST", "/api/v1/auth/login", { body: { username: "bob", password: PASSWORD } })).status).toBe(401);
    const users = await send("GET", "/api/v1/rbac/users", { token: root });
    expect(users.body.users.find((u: { username: string }) => u.username === "bob")).toMatchObject({ locked: true, enabled: false });
    expect(logs.some((l) => l.msg === "account locked after repeated failed logins" && l.username === "bob")).toBe(true);

    expect((await send("PUT", `/api/v1/rbac/users/${created.body.id}`, { token: root, body: { enabled: true } })).body).toMatchObject({
      locked: false,
      enabled: true,
    });
    expect((await send("POST", "/api/v1/auth/login", { body: { username: "bob", password: PASSWORD } })).status).toBe(200);
  });

  it("limits failed logins per client address across accounts", async () => {
    await store.db.query("DELETE FROM login_throttle");
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++)
      statuses.push((await send("POST", "/api/v1/auth/login", { body: { username: `ghost${i}`, password: "some wrong password" } })).status);
    expect(statuses.slice(0, 8).every((s) => s === 401)).toBe(true);
    expect(statuses[8]).toBe(429);
    await store.db.query("DELETE FROM login_throttle");
  });

  it("never writes passwords or tokens to logs or responses", async () => {
    const everything = JSON.stringify(logs) + JSON.stringify((await send("GET", "/api/v1/rbac/users", { token: root })).body);
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain("pglens_session_");
    expect(everything).not.toContain(root);
    expect(everything).not.toMatch(/pbkdf2/);
  });
});

describe("users, groups and tokens", () => {
  it("enforces the password policy and unique names, and reserves superuser status to superusers", async () => {
    expect((await send("POST", "/api/v1/rbac/users", { token: root, body: { username: "weak", password: "password1234" } })).body.error).toMatch(/too common/);
    expect((await send("POST", "/api/v1/rbac/users", { token: root, body: { username: "alice", password: PASSWORD } })).status).toBe(409);
    expect((await send("POST", "/api/v1/rbac/users", { token: root, body: { username: "bad name!", password: PASSWORD } })).status).toBe(400);
    const { token: usersAdmin, id } = await userWithToken(store.db, "usersadmin");
    const group = await send("POST", "/api/v1/rbac/groups", { token: root, body: { name: "user admins" } });
    await send("POST", `/api/v1/rbac/groups/${group.body.id}/members`, { token: root, body: { user_id: id } });
    expect((await send("PUT", `/api/v1/rbac/groups/${group.body.id}/permissions`, { token: root, body: { admin_permissions: ["manage_users"] } })).status).toBe(
      200,
    );
    expect((await send("POST", "/api/v1/rbac/users", { token: usersAdmin, body: { username: "carol", password: PASSWORD } })).status).toBe(201);
    expect(
      (await send("POST", "/api/v1/rbac/users", { token: usersAdmin, body: { username: "mallory", password: PASSWORD, is_superuser: true } })).status,
    ).toBe(403);
    expect((await send("PUT", `/api/v1/rbac/groups/${group.body.id}/permissions`, { token: usersAdmin, body: { admin_permissions: ["*"] } })).status).toBe(403);
  });

  it("nests groups, refuses cycles, and reports effective privileges", async () => {
    const parent = (await send("POST", "/api/v1/rbac/groups", { token: root, body: { name: "operators" } })).body;
    const child = (await send("POST", "/api/v1/rbac/groups", { token: root, body: { name: "night shift" } })).body;
    expect((await send("POST", "/api/v1/rbac/groups", { token: root, body: { name: "operators" } })).status).toBe(409);
    expect((await send("POST", `/api/v1/rbac/groups/${parent.id}/members`, { token: root, body: { group_id: child.id } })).status).toBe(204);
    expect((await send("POST", `/api/v1/rbac/groups/${child.id}/members`, { token: root, body: { group_id: parent.id } })).body.error).toMatch(
      /would create a cycle/,
    );
    expect(
      (await send("PUT", `/api/v1/rbac/groups/${parent.id}/privileges/mcp`, { token: root, body: { mcp_privileges: ["list_probes", "nonsense"] } })).body.error,
    ).toMatch(/unknown MCP privilege `nonsense`/);
    await send("PUT", `/api/v1/rbac/groups/${parent.id}/privileges/mcp`, { token: root, body: { mcp_privileges: ["list_probes"] } });
    const { id: daveId, token: dave } = await userWithToken(store.db, "dave");
    await send("POST", `/api/v1/rbac/groups/${child.id}/members`, { token: root, body: { user_id: daveId } });
    expect((await send("GET", `/api/v1/rbac/groups/${child.id}/effective-privileges`, { token: root })).body.mcp_privileges).toEqual(["list_probes"]);
    expect((await send("GET", `/api/v1/rbac/users/${daveId}/privileges`, { token: root })).body).toMatchObject({
      groups: ["night shift", "operators"],
      mcp_privileges: ["list_probes"],
    });
    const tools = await send("GET", "/api/v1/mcp/tools", { token: dave });
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toEqual(["list_probes"]);
    const refused = await send("POST", "/api/v1/mcp/tools/call", { token: dave, body: { name: "describe_probe", arguments: { probe_name: "pg_stat_wal" } } });
    expect(refused.body).toMatchObject({ isError: true, content: [{ text: "access denied: you may not use the tool `describe_probe`" }] });
  });

  it("creates, scopes and revokes API tokens; a token scoped to one connection sees only it", async () => {
    const a = await addConnection(store.db, "a");
    const b = await addConnection(store.db, "b");
    await writeSamples(store.db, { connectionId: a, probe: "pg_stat_wal", rows: [{ collected_at: "2026-01-01T00:00:30Z", wal_records: 1 }] });
    const created = await send("POST", "/api/v1/rbac/tokens", { token: root, body: { note: "grafana", expires_in: "30d" } });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^pglens_[\w-]{43}$/);
    const query = (id: number, token: string) => send("GET", `/api/v1/metrics/query?probe_name=pg_stat_wal&connection_id=${id}&metrics=wal_records`, { token });
    expect((await query(b, created.body.token)).status).toBe(200);

    const scope = await send("PUT", `/api/v1/rbac/tokens/${created.body.id}/scope`, {
      token: root,
      body: { connections: [{ connection_id: a, access_level: "read" }], mcp_privileges: ["query_metrics"] },
    });
    expect(scope.body).toEqual({ connections: [{ connection_id: a, access_level: "read" }], mcp_privileges: ["query_metrics"], admin_permissions: [] });
    expect((await query(a, created.body.token)).status).toBe(200);
    expect(await query(b, created.body.token)).toMatchObject({
      status: 403,
      body: { error: `you may not read connection ${b}: ask an administrator for a connection privilege on it` },
    });
    expect(await query(999_999, created.body.token)).toMatchObject({ status: 404, body: { error: "connection 999999 not found" } });
    const tools = await send("GET", "/api/v1/mcp/tools", { token: created.body.token });
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toEqual(["query_metrics"]);
    expect((await send("GET", "/api/v1/rbac/users", { token: created.body.token })).status).toBe(403); // a scope is an allow-list: no admin permissions listed

    const listed = await send("GET", "/api/v1/rbac/tokens", { token: root });
    const entry = listed.body.tokens.find((t: { id: number }) => t.id === created.body.id);
    expect(entry).toMatchObject({ owner: "root", note: "grafana", token_prefix: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(listed.text).not.toContain(created.body.token);

    expect((await send("DELETE", `/api/v1/rbac/tokens/${created.body.id}`, { token: root })).status).toBe(204);
    expect((await query(a, created.body.token)).status).toBe(401);
    expect((await send("DELETE", `/api/v1/rbac/tokens/${created.body.id}`, { token: root })).status).toBe(404);
  });

  it("refuses expired API tokens", async () => {
    const { token } = await userWithToken(store.db, "erin");
    await store.db.query("UPDATE api_tokens SET expires_at = now() - interval '1 minute' WHERE user_id = (SELECT id FROM users WHERE username = 'erin')");
    expect((await send("GET", "/api/v1/user/info", { token })).status).toBe(401);
  });

  it("ends a deleted user's sessions and tokens", async () => {
    const created = await send("POST", "/api/v1/rbac/users", { token: root, body: { username: "frank", password: PASSWORD } });
    const session = (await send("POST", "/api/v1/auth/login", { body: { username: "frank", password: PASSWORD } })).body.token;
    const apiToken = (await send("POST", "/api/v1/rbac/tokens", { token: root, body: { owner_username: "frank" } })).body.token;
    expect((await send("GET", "/api/v1/user/info", { token: apiToken })).status).toBe(200);
    expect((await send("DELETE", `/api/v1/rbac/users/${created.body.id}`, { token: root })).status).toBe(204);
    expect((await send("GET", "/api/v1/user/info", { token: session })).status).toBe(401);
    expect((await send("GET", "/api/v1/user/info", { token: apiToken })).status).toBe(401);
    expect((await send("DELETE", `/api/v1/rbac/users/${created.body.id}`, { token: root })).status).toBe(404);
  });
});
