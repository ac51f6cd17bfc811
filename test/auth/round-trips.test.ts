/**
 * Datastore round trips per request, counted through the driver interface so they cannot silently grow back:
 * authenticating a token costs one statement (none while cached), a metrics request two after it (its context,
 * none while cached, then its data). And the caches' bounds: a revoked token stops working at once on the
 * instance that revoked it, and within auth.cache_seconds on any other; so does a removed connection. Lists and
 * summaries of many things (tokens, channels, connections) take as many statements as of one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallerCache, MAX_CACHED_CALLERS } from "../../src/auth/caller-cache.ts";
import type { Authority } from "../../src/auth/rbac.ts";
import { issueApiToken } from "../../src/auth/issue-token.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { setTokenScope } from "../../src/datastore/api-tokens.ts";
import { resolveConfig } from "../../src/config.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { counting } from "../support/counting-driver.ts";
import { testApp } from "../support/app.ts";
import { pause } from "../support/monitored.ts";

describe("round trips", () => {
  let store: TestDatastore;
  let connectionId: number;
  let token: string;
  // One clock reading: samples exactly a minute apart (a tick between readings would make one interval 1 ms
  // longer, and a bucket holding intervals of two lengths is answered by the scan, at one more statement).
  const now = Date.now();
  const hour = (h: number) => new Date(now - h * 3_600_000);

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    connectionId = await addConnection(store.db, "counted");
    const rows = Array.from({ length: 60 }, (_, i) => hour(1 - i / 60)).flatMap((t, i) =>
      ["app", "shop"].map((d) => ({ collected_at: t.toISOString(), database_name: d, datname: d, xact_commit: 100 * i, numbackends: 3 })),
    );
    await writeSamples(store.db, { connectionId, probe: "pg_stat_database", rows });
    ({ token } = await userWithToken(store.db, "reader", { superuser: true }));
  });
  afterAll(() => store.close());

  const request = async (app: ReturnType<typeof testApp>["app"], path: string, bearer = token) => {
    const res = await app.request(path, { headers: { authorization: `Bearer ${bearer}` } });
    return { status: res.status, body: await res.json() };
  };

  /** An app over a counting driver: `get` answers 200's body and the statements it took. */
  const countedApp = () => {
    const { driver, statements } = counting(store.db);
    const { app } = testApp(driver, { config: { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 5 } } });
    const get = async (path: string) => {
      statements.length = 0;
      const { status, body } = await request(app, path);
      expect(status, JSON.stringify(body)).toBe(200);
      return { body, count: statements.length };
    };
    return { statements, get };
  };

  it("a token costs one statement, none while cached; a metrics query two more", async () => {
    const { driver, statements } = counting(store.db);
    const { app } = testApp(driver, { config: { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 5 } } });
    const metrics = `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${connectionId}&metrics=xact_commit_per_sec&time_range=1h`;
    const first = await request(app, metrics);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body[0].data.some((p: { value: number | null }) => p.value !== null)).toBe(true);
    expect(statements, statements.join("\n")).toHaveLength(3);
    // Token and connection facts cached: only the data.
    statements.length = 0;
    expect((await request(app, metrics)).status).toBe(200);
    expect(statements, statements.join("\n")).toHaveLength(1);
    for (const grouped of ["&group_by=database_name", "&database_name=app"]) {
      statements.length = 0;
      expect((await request(app, metrics + grouped)).status).toBe(200);
      expect(statements, `${grouped}: ${statements.join("\n")}`).toHaveLength(1); // the raw rows (every shape: statements-per-request.test.ts)
    }
    // A change through this instance empties the caches: token and connection facts are read again.
    const logout = await app.request("/api/v1/auth/logout", { method: "POST" });
    expect(logout.status).toBe(200);
    statements.length = 0;
    expect((await request(app, metrics)).status).toBe(200);
    expect(statements, statements.join("\n")).toHaveLength(3);
  });

  it("a performance summary, warm, reads its data only: the connections' facts of both probes are cached as the metrics query's", async () => {
    const { driver, statements } = counting(store.db);
    const { app } = testApp(driver, { config: { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 5 } } });
    const summary = `/api/v1/metrics/performance-summary?connection_id=${connectionId}&time_range=1h`;
    const first = await request(app, summary);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.connections[0].connection_name).toBe("counted");
    const cold = statements.length;
    statements.length = 0;
    expect((await request(app, summary)).status).toBe(200);
    // The token and the two probes' connection facts: three statements fewer.
    expect(statements, statements.join("\n")).toHaveLength(cold - 3);
  });

  it("a performance summary of several connections takes as many statements as one, each with its own latest transaction id ages", async () => {
    const others = [await addConnection(store.db, "second"), await addConnection(store.db, "third")];
    const ids = [connectionId, ...others];
    for (const [i, id] of ids.entries()) {
      const sample = (t: Date, age: number) => [
        { collected_at: t.toISOString(), datname: "app", datistemplate: false, age_datfrozenxid: age },
        { collected_at: t.toISOString(), datname: "template1", datistemplate: true, age_datfrozenxid: 5 },
      ];
      await writeSamples(store.db, { connectionId: id, probe: "pg_database", rows: [...sample(hour(2), 1), ...sample(hour(1), 1000 * (i + 1))] });
    }
    const { statements, get } = countedApp();
    const summary = (list: number[]) => `/api/v1/metrics/performance-summary?connection_id=${list.join(",")}&time_range=1h`;
    const warm = async (list: number[]) => (await get(summary(list)), await get(summary(list)));
    const one = await warm([connectionId]);
    const three = await warm(ids);
    expect(three.count, statements.join("\n")).toBe(one.count);
    expect(three.body.connections.map((c: { connection_id: number; xid_age: unknown }) => [c.connection_id, c.xid_age])).toEqual(
      ids.map((id, i) => [id, [{ database_name: "app", age: 1000 * (i + 1), percent: expect.any(Number) }]]),
    );
  });

  it("listing API tokens reads every token's scope in the same statements however many tokens there are", async () => {
    const { statements, get } = countedApp();
    const list = async () => {
      const { body, count } = await get("/api/v1/rbac/tokens");
      return { tokens: body.tokens as Array<{ id: number; scope: unknown }>, count };
    };
    await list(); // the caller's token, now cached
    const before = await list();
    const issued = [];
    for (const note of ["one", "two", "three"]) issued.push((await issueApiToken(store.db, { owner: "reader", note })).id);
    await setTokenScope(store.db, issued[0], { connections: [{ connection_id: connectionId, access_level: "read" }], mcp_privileges: ["query_metrics"] });
    await setTokenScope(store.db, issued[1], { admin_permissions: ["manage_connections"] });
    const after = await list();
    expect(after.tokens).toHaveLength(before.tokens.length + 3);
    expect(after.count, statements.join("\n")).toBe(before.count);
    const scopeOf = (id: number) => after.tokens.find((t) => t.id === id)?.scope;
    expect(scopeOf(issued[0])).toEqual({
      connections: [{ connection_id: connectionId, access_level: "read" }],
      mcp_privileges: ["query_metrics"],
      admin_permissions: [],
    });
    expect(scopeOf(issued[1])).toEqual({ connections: [], mcp_privileges: [], admin_permissions: ["manage_connections"] });
    expect(scopeOf(issued[2])).toEqual({});
  });

  it("listing notification channels reads every email channel's recipients in one statement", async () => {
    const { statements, get } = countedApp();
    const list = async () => {
      const { body, count } = await get("/api/v1/notification-channels");
      return { channels: body as Array<{ name: string; recipients?: Array<{ email_address: string }> }>, count };
    };
    const email = async (name: string, recipients: string[]) => {
      const [{ id }] = await store.db.query<{ id: number }>(
        "INSERT INTO notification_channels (name, channel_type, smtp_host, from_address, created_by) VALUES ($1, 'email', 'mail.example.com', 'pglens@example.com', 'test') RETURNING id",
        [name],
      );
      for (const address of recipients) await store.db.query("INSERT INTO email_recipients (channel_id, email_address) VALUES ($1, $2)", [id, address]);
    };
    await email("ops", ["b@example.com", "a@example.com"]);
    await list(); // the caller's token, now cached
    const one = await list();
    await email("dba", ["dba@example.com"]);
    await email("nobody", []);
    const three = await list();
    expect(three.count, statements.join("\n")).toBe(one.count);
    expect(three.channels.map((c) => [c.name, c.recipients?.map((r) => r.email_address)])).toEqual(
      expect.arrayContaining([
        ["ops", ["a@example.com", "b@example.com"]],
        ["dba", ["dba@example.com"]],
        ["nobody", []],
      ]),
    );
  });

  it("a group_by or a database_name filter over many samples one a minute, a round missed, takes one data statement", async () => {
    const aligned = await addConnection(store.db, "aligned");
    const slot = Math.floor(now / 60_000) * 60_000;
    const rows = Array.from({ length: 600 }, (_, i) => slot - (599 - i) * 60_000)
      .filter((_, i) => i !== 300) // a missed round
      .flatMap((t, i) => ["app", "shop"].map((d) => ({ collected_at: new Date(t).toISOString(), database_name: d, datname: d, xact_commit: 100 * i })));
    await writeSamples(store.db, { connectionId: aligned, probe: "pg_stat_database", rows });
    await store.db.query(
      "INSERT INTO probe_configs (probe_name, scope, scope_id, collection_interval_seconds, retention_days) VALUES ('pg_stat_database', 'server', $1, 60, 7)",
      [aligned],
    );
    const { driver, statements } = counting(store.db);
    const { app } = testApp(driver, { config: { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 5 } } });
    const metrics = `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${aligned}&metrics=xact_commit_per_sec&time_range=24h`;
    expect((await request(app, metrics)).status).toBe(200); // the token and the connection's context, now cached
    for (const narrowed of ["&group_by=database_name", "&database_name=app"]) {
      statements.length = 0;
      const { status, body } = await request(app, metrics + narrowed);
      expect(status).toBe(200);
      expect(
        body[0].data.some((p: { value: number | null }) => p.value !== null),
        narrowed,
      ).toBe(true);
      expect(statements, `${narrowed}: ${statements.join("\n")}`).toHaveLength(1);
    }
  });

  it("another instance sees a connection's removal within auth.cache_seconds", async () => {
    const gone = await addConnection(store.db, "soon gone");
    const elsewhere = testApp(store.db, { config: { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 1 } } }).app;
    const metrics = `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${gone}&metrics=numbackends&time_range=1h`;
    const started = Date.now();
    expect((await request(elsewhere, metrics)).status).toBe(200);
    await store.db.query("DELETE FROM connections WHERE id = $1", [gone]); // through another instance
    if (Date.now() - started < 900) expect((await request(elsewhere, metrics)).status).toBe(200); // still cached there
    await pause(Math.max(0, 1100 - (Date.now() - started)));
    expect((await request(elsewhere, metrics)).status).toBe(404);
  });

  it("an unknown token costs one statement and is not remembered", async () => {
    const { driver, statements } = counting(store.db);
    const { app } = testApp(driver);
    for (let i = 0; i < 2; i++) {
      statements.length = 0;
      expect((await request(app, "/api/v1/connections", "pglens_not_a_real_token")).status).toBe(401);
      expect(statements).toHaveLength(1);
    }
  });

  it("revocation applies at once on the instance that revoked, within auth.cache_seconds on another", async () => {
    const { token: doomed, id: userId } = await userWithToken(store.db, "doomed");
    const config = { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 1 } };
    const here = testApp(store.db, { config }).app;
    const elsewhere = testApp(store.db, { config }).app;
    expect((await request(here, "/api/v1/connections", doomed)).status).toBe(200);
    expect((await request(elsewhere, "/api/v1/connections", doomed)).status).toBe(200);
    // An administrator disables the user through this instance.
    const disabled = await here.request(`/api/v1/rbac/users/${userId}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ enabled: false }),
    });
    expect(disabled.status).toBe(200);
    expect((await request(here, "/api/v1/connections", doomed)).status).toBe(401);
    expect((await request(elsewhere, "/api/v1/connections", doomed)).status).toBe(200); // still cached there
    await pause(1100);
    expect((await request(elsewhere, "/api/v1/connections", doomed)).status).toBe(401);
  });
  it("a token in steady use is still checked again once auth.cache_seconds have passed", async () => {
    const { token: busy, id: userId } = await userWithToken(store.db, "busy");
    const elsewhere = testApp(store.db, { config: { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 1 } } }).app;
    const started = Date.now();
    expect((await request(elsewhere, "/api/v1/connections", busy)).status).toBe(200);
    await store.db.query("UPDATE users SET enabled = false WHERE id = $1", [userId]); // through another instance
    // Requests keep coming while the entry lives; they must not extend its life.
    while (Date.now() - started < 900) {
      expect((await request(elsewhere, "/api/v1/connections", busy)).status).toBe(200);
      await pause(100);
    }
    await pause(Math.max(0, 1100 - (Date.now() - started)));
    expect((await request(elsewhere, "/api/v1/connections", busy)).status).toBe(401);
  });
});

describe("caller cache", () => {
  const someone = (id: number) => ({ principal: { userId: id } }) as unknown as Authority;

  it("forgets an entry after its time and holds at most MAX_CACHED_CALLERS, the oldest going first", () => {
    let now = 0;
    const cache = new CallerCache(5_000, () => now);
    cache.set("a", someone(1));
    now = 4_999;
    expect(cache.get("a")).toEqual(someone(1));
    now = 5_000;
    expect(cache.get("a")).toBeUndefined();
    for (let i = 0; i <= MAX_CACHED_CALLERS; i++) cache.set(`t${i}`, someone(i));
    expect(cache.size).toBe(MAX_CACHED_CALLERS);
    expect(cache.get("t0")).toBeUndefined();
    expect(cache.get(`t${MAX_CACHED_CALLERS}`)).toEqual(someone(MAX_CACHED_CALLERS));
  });

  it("keeps nothing when the time is 0", () => {
    const cache = new CallerCache(0);
    cache.set("a", someone(1));
    expect(cache.get("a")).toBeUndefined();
  });
});
