/**
 * Security review, findings 6 to 9: resource limits on the live tools, login throttling behind proxies,
 * token and session housekeeping, input PostgreSQL cannot store, oversized bodies and foreign MCP origins.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { collectOnce } from "../../src/collector/collect.ts";
import { resolveConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { proxyTrust } from "../../src/trusted-proxies.ts";
import { testApp } from "../support/app.ts";
import { CHEAP_HASH, userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { TEST_SECRET, monitorRoleUrl, registerServer } from "../support/monitored.ts";
import { hashPassword } from "../../src/auth/passwords.ts";

let store: TestDatastore;
let root: { id: number; token: string };
let conn: number;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  root = await userWithToken(store.db, "root", { superuser: true });
  conn = await registerServer(store.db, "live", await monitorRoleUrl(inject("pg17Url")));
});
afterAll(() => store.close());

const callTool = (send: ReturnType<typeof client>, token: string, name: string, args: Record<string, unknown>) =>
  send("POST", "/api/v1/mcp/tools/call", { token, body: { name, arguments: { connection_id: conn, ...args } } });

describe("finding 6: live tool limits", () => {
  it("stops a result at max_result_bytes with a note", async () => {
    const send = client(testApp(store.db, { config: { live_tools: { ...resolveConfig({}, {}).live_tools, max_result_bytes: 2_000_000 } } }).app);
    // Cells are cut to 10,000 characters on the server, so 500 rows of 900,000 pass 2 MB after about 200.
    const res = await callTool(send, root.token, "query_database", { query: "SELECT repeat('x', 900000) AS big FROM generate_series(1, 500)", max_rows: 500 });
    expect(res.status).toBe(200);
    const text = res.body.content[0].text as string;
    expect(text).toMatch(/\(199 rows; truncated: the result passed 2000000 bytes \(live_tools.max_result_bytes\)/);
    expect(text.length).toBeLessThan(2_100_000);
  });

  it("answers 429 with Retry-After beyond the sessions allowed per connection and per user", async () => {
    const limits = { ...resolveConfig({}, {}).live_tools, max_sessions_per_connection: 2, max_sessions_per_user: 3 };
    const send = client(testApp(store.db, { config: { live_tools: limits } }).app);
    const sleepers = await Promise.all(Array.from({ length: 4 }, () => callTool(send, root.token, "query_database", { query: "SELECT pg_sleep(1)" })));
    expect(sleepers.map((r) => r.status).sort()).toEqual([200, 200, 429, 429]);
    const busy = sleepers.find((r) => r.status === 429)!;
    expect(busy.body.error).toContain(`too many live queries on connection ${conn} (at most 2 at once)`);
    // Once they finish, the slots are free again.
    expect((await callTool(send, root.token, "query_database", { query: "SELECT 1" })).status).toBe(200);
    const [{ n }] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM live_sessions");
    expect(n).toBe(0);
  });
});

describe("finding 7: proxies, token use and session housekeeping", () => {
  it("takes the client address from X-Forwarded-For only when the peer is a trusted proxy", () => {
    const trust = proxyTrust(["10.0.0.0/8", "::1"]);
    expect(trust.clientAddress("203.0.113.9", "198.51.100.1")).toBe("203.0.113.9");
    expect(trust.clientAddress("10.1.2.3", "198.51.100.1, 10.9.9.9")).toBe("198.51.100.1");
    expect(trust.clientAddress("::ffff:10.1.2.3", "198.51.100.7")).toBe("198.51.100.7");
    expect(trust.clientAddress("::1", undefined)).toBe("::1");
    expect(trust.forwardedHttps("10.1.2.3", "https")).toBe(true);
    expect(trust.forwardedHttps("203.0.113.9", "https")).toBe(false);
    expect(() => proxyTrust(["not-an-address"])).toThrow(/trusted_proxies/);
  });

  it("does not let failures from one address lock an account out for everyone", async () => {
    const config = resolveConfig({}, { PGLENS_SECRET: TEST_SECRET });
    const app = createApp({ config, log: createLogger("error"), datastore: { open: () => store.db }, clientAddress: (c) => c.req.header("x-test-peer") });
    await store.db.query("INSERT INTO users (username, password_hash) VALUES ('alice', $1)", [await hashPassword("alice's fine passphrase", CHEAP_HASH)]);
    const login = (password: string, peer: string) =>
      app.request("/api/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json", "x-test-peer": peer },
        body: JSON.stringify({ username: "alice", password }),
      });
    for (let i = 0; i < 12; i++) await login(`wrong guess number ${i}`, "198.51.100.66");
    expect((await login("alice's fine passphrase", "198.51.100.66")).status).toBe(429);
    expect((await login("alice's fine passphrase", "203.0.113.5")).status).toBe(200);
  });

  it("records when an API token was last used, and prunes expired sessions on a schedule", async () => {
    const send = client(testApp(store.db).app);
    const { token } = await userWithToken(store.db, "bob");
    expect((await send("GET", "/api/v1/user/info", { token })).status).toBe(200);
    const listed = (await send("GET", "/api/v1/rbac/tokens", { token: root.token })).body.tokens.find((t: { owner: string }) => t.owner === "bob");
    expect(Date.now() - Date.parse(listed.last_used_at)).toBeLessThan(60_000);

    await store.db.query("INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ('stale', $1, now() - interval '1 hour')", [root.id]);
    await store.db.query("DELETE FROM maintenance_runs");
    await store.db.query("UPDATE connections SET is_monitored = false");
    await collectOnce(store.db, resolveConfig({}, { PGLENS_SECRET: TEST_SECRET }), createLogger("error"));
    expect(await store.db.query("SELECT token_hash FROM sessions WHERE token_hash = 'stale'")).toEqual([]);
    await store.db.query("UPDATE connections SET is_monitored = true");
  });
});

describe("finding 8: input PostgreSQL cannot store", () => {
  it("answers 400 naming the field, never a 500", async () => {
    const send = client(testApp(store.db).app);
    const nul = await send("POST", "/api/v1/auth/login", { body: { username: "\u0000root", password: "whatever it is" } });
    expect(nul).toMatchObject({ status: 400, body: { error: "body field `username`: contains a NUL character (\\u0000), which cannot be stored" } });
    expect((await send("POST", "/api/v1/rbac/groups", { token: root.token, body: { name: "a\u0000b" } })).status).toBe(400);
    expect((await send("DELETE", "/api/v1/clusters/99999999999999999999", { token: root.token })).status).toBe(400);
    expect(
      (await send("GET", "/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=99999999999999999999&metrics=xact_commit", { token: root.token }))
        .status,
    ).toBe(400);
    expect((await send("GET", "/api/v1/connections?x=%00", { token: root.token })).status).toBe(400);
    expect((await send("POST", "/api/v1/connections/current", { token: root.token, body: { connection_id: 1e20 } })).status).toBe(400);
  });

  it("addresses ids only by plain digits: ' 1' deletes nobody", async () => {
    const send = client(testApp(store.db).app);
    const res = await send("DELETE", `/api/v1/rbac/users/%20${root.id}`, { token: root.token });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("path parameter `id`");
    expect(await store.db.query("SELECT username FROM users WHERE id = $1", [root.id])).toEqual([{ username: "root" }]);
  });
});

describe("finding 9: bodies, origins and cookies", () => {
  it("refuses a body over max_body_bytes with 413 before reading it", async () => {
    const send = client(testApp(store.db).app);
    const res = await send("POST", "/api/v1/auth/login", { body: { username: "root", password: "x".repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.error).toContain("at most 1048576 bytes");
  });

  it("refuses MCP requests from a foreign browser origin unless allowed", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const mcp = (app: ReturnType<typeof testApp>["app"], origin?: string) =>
      app.request("http://pglens.test/mcp/v1", {
        method: "POST",
        headers: {
          authorization: `Bearer ${root.token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify(list),
      });
    const { app } = testApp(store.db);
    const foreign = await mcp(app, "https://evil.example");
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error).toContain("mcp.allowed_origins");
    expect((await mcp(app)).status).toBe(200);
    expect((await mcp(app, "http://localhost:8080")).status).toBe(200); // a laptop without public_url
    const allowed = testApp(store.db, { config: { mcp: { allowed_origins: ["https://evil.example"] } } }).app;
    expect((await mcp(allowed, "https://evil.example")).status).toBe(200);
  });

  // #46 item 15: a DNS-rebinding page sends its own name as Host, so Host must never vouch for the Origin.
  it("judges a browser's Origin by public_url and mcp.allowed_origins, never by the Host header", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const rebound = (app: ReturnType<typeof testApp>["app"], origin: string) =>
      app.request(`${origin}/mcp/v1`, {
        method: "POST",
        headers: {
          host: new URL(origin).host,
          origin,
          authorization: `Bearer ${root.token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(list),
      });
    const { app } = testApp(store.db);
    const attack = await rebound(app, "http://rebind.attacker.example:8080");
    expect(attack.status).toBe(403);
    expect((await attack.json()).error).toContain("set public_url (PGLENS_PUBLIC_URL)");
    const published = testApp(store.db, { config: { public_url: "https://pglens.example.com" } }).app;
    expect((await rebound(published, "https://pglens.example.com")).status).toBe(200);
    expect((await rebound(published, "http://localhost:8080")).status).toBe(403);
    expect((await rebound(published, "http://rebind.attacker.example:8080")).status).toBe(403);
  });

  it("marks the session cookie Secure over HTTPS", async () => {
    await store.db.query("INSERT INTO users (username, password_hash) VALUES ('carol', $1)", [await hashPassword("carol's fine passphrase", CHEAP_HASH)]);
    const { app } = testApp(store.db);
    const login = (url: string) =>
      app.request(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "carol", password: "carol's fine passphrase" }),
      });
    expect((await login("https://pglens.test/api/v1/auth/login")).headers.get("set-cookie")).toMatch(/; Secure/);
    expect((await login("http://pglens.test/api/v1/auth/login")).headers.get("set-cookie")).not.toMatch(/Secure/);
  });
});
