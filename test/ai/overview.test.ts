/**
 * GET /api/v1/overview: the snapshot of what the caller can see, and an LLM summary written again only on a
 * significant change or on request; a restricted caller's prompt holds only its servers; two instances
 * ask the LLM once per change; no LLM configured still gives the snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setConnectionGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { parseSse } from "../support/sse.ts";
import { OVERVIEW_POLL_MS } from "../../src/routes/overview.ts";
import { fencedData } from "../support/fenced.ts";

let wire: WireServer;
let store: TestDatastore;
let root: string;
let narrow: string;
let nobody: string;
let prod: number;
let staging: number;

const llm = () => llmSection(wire, { anthropic: KEYS.anthropic }, { model: "lazy" });
const instance = () => client(testApp(store.db, { config: { llm: llm() } }).app);
const llmCalls = () => wire.requests.filter((r) => r.path.endsWith("/messages")).length;

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  prod = await addConnection(store.db, "prod-db-1");
  staging = await addConnection(store.db, "staging-db-7");
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  const n = await userWithToken(store.db, "narrow");
  const g = await createGroup(store.db, "staging-only", "");
  await setConnectionGrants(store.db, g.id, [{ connection_id: staging, access_level: "read" }]);
  await addMember(store.db, g.id, { type: "user", id: n.id });
  narrow = n.token;
  nobody = (await userWithToken(store.db, "nobody")).token;
});
afterAll(async () => {
  await wire.close();
  await store.close();
});

const raise = (connectionId: number, severity: string, title: string) =>
  store.db.query("INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name) VALUES ('threshold', $1, $2, $3, 'active', $3)", [
    connectionId,
    severity,
    title,
  ]);

describe("GET /api/v1/overview", () => {
  it("summarizes the snapshot once, and again only when something significant changes or on refresh", async () => {
    const api = instance();
    const before = llmCalls();
    const first = await api("GET", "/api/v1/overview", { token: root });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      status: "ready",
      llm: "configured",
      summary: expect.stringContaining("prod-db-1"),
      snapshot: { server_total: 2, server_online: 2, alert_total: 0 },
    });
    expect(Date.parse(first.body.stale_at) - Date.parse(first.body.generated_at)).toBe(300_000);
    expect(llmCalls() - before).toBe(1);
    const prompt = JSON.stringify(wire.requests.at(-1)!.body);
    expect(prompt).toContain("prod-db-1");
    expect(prompt).toContain("staging-db-7");

    expect((await api("GET", "/api/v1/overview", { token: root })).body.summary).toBe(first.body.summary);
    expect(llmCalls() - before).toBe(1);

    await raise(prod, "critical", "replication lag over 5 minutes");
    const changed = await api("GET", "/api/v1/overview", { token: root });
    expect(changed.body.snapshot).toMatchObject({
      alert_total: 1,
      alert_critical: 1,
      server_warning: 1,
      top_alerts: [{ title: "replication lag over 5 minutes", server_name: "prod-db-1", severity: "critical" }],
    });
    expect(llmCalls() - before).toBe(2);
    // A refresh right after a summary was written is refused; a minute later it writes one.
    const tooSoon = await api("GET", "/api/v1/overview?refresh=true", { token: root });
    expect(tooSoon).toMatchObject({ status: 429, body: { error: expect.stringMatching(/a refresh is allowed once every 60 s; try again in \d+ s/) } });
    expect(llmCalls() - before).toBe(2);
    await store.db.query("UPDATE overview_summaries SET generated_at = generated_at - interval '61 seconds'");
    expect((await api("GET", "/api/v1/overview?refresh=true", { token: root })).status).toBe(200);
    expect(llmCalls() - before).toBe(3);
  });

  it("gives a restricted caller a summary of exactly its servers", async () => {
    const before = wire.requests.length;
    const res = await instance()("GET", "/api/v1/overview", { token: narrow });
    expect(res.status, res.text).toBe(200);
    expect(res.body.snapshot.servers.map((s: { name: string }) => s.name)).toEqual(["staging-db-7"]);
    const prompts = JSON.stringify(wire.requests.slice(before).map((r) => r.body));
    expect(prompts).toContain("staging-db-7");
    expect(prompts).not.toContain("prod-db-1");
    expect(prompts).not.toContain("replication lag");
    expect(await instance()("GET", `/api/v1/overview?connection_ids=${prod}`, { token: narrow })).toMatchObject({ status: 404 });
  });

  it("asks the LLM once per change however many instances ask at once", async () => {
    await raise(staging, "warning", "disk 85% full");
    const before = llmCalls();
    const results = await Promise.all([instance(), instance(), instance()].map((api) => api("GET", "/api/v1/overview", { token: root })));
    expect(llmCalls() - before).toBe(1);
    expect(results.map((r) => r.body.status).sort()).toEqual(["generating", "generating", "ready"]);
    expect((await instance()("GET", "/api/v1/overview", { token: root })).body.snapshot.alert_total).toBe(2);
    expect(llmCalls() - before).toBe(1);
  });

  it("narrows to servers, clusters or connection ids, and refuses what does not parse", async () => {
    const api = instance();
    expect(
      (await api("GET", `/api/v1/overview?scope_type=server&scope_id=${prod}`, { token: root })).body.snapshot.servers.map((s: { id: number }) => s.id),
    ).toEqual([prod]);
    expect((await api("GET", `/api/v1/overview?connection_ids=${staging},%20${prod},`, { token: root })).body.snapshot.server_total).toBe(2);
    for (const [query, message] of [
      ["scope_type=server", /scope_type and scope_id go together/],
      ["scope_type=planet&scope_id=1", /scope_type must be server, cluster or group/],
      ["scope_type=server&scope_id=-1", /scope_id must be a positive integer/],
      ["connection_ids=1,x", /connection_ids: a comma-separated list of positive integers/],
    ] as const) {
      const res = await api("GET", `/api/v1/overview?${query}`, { token: root });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect((await api("GET", "/api/v1/overview?scope_type=cluster&scope_id=999", { token: root })).status).toBe(404);
  });

  it("says empty when the caller can see no server, and gives the snapshot without a summary when no LLM is configured or summaries are switched off", async () => {
    expect((await instance()("GET", "/api/v1/overview", { token: nobody })).body).toMatchObject({ status: "empty", summary: null });
    const before = wire.requests.length;
    const res = await client(testApp(store.db).app)("GET", "/api/v1/overview", { token: root });
    expect(res.body).toMatchObject({ status: "ready", summary: null, llm: "unconfigured", snapshot: { server_total: 2 } });
    expect(wire.requests.length).toBe(before);
    const off = client(testApp(store.db, { config: { llm: llmSection(wire, { anthropic: KEYS.anthropic }, { overview_summary: false }) } }).app);
    expect((await off("GET", "/api/v1/overview?refresh=true", { token: root })).body).toMatchObject({
      summary: null,
      llm: "disabled",
      snapshot: { server_total: 2 },
    });
    expect(wire.requests.length).toBe(before);
    expect((await instance()("GET", "/api/v1/overview")).status).toBe(401);
  });

  it("is also the get_overview tool, with its MCP privilege", async () => {
    const api = instance();
    const res = await api("POST", "/api/v1/mcp/tools/call", { token: root, body: { name: "get_overview", arguments: { connection_ids: [staging] } } });
    expect(res.body.isError).toBe(false);
    const [summary, snapshot] = fencedData(res.body.content[0].text).split("\n\nSnapshot:\n");
    expect(summary).toMatch(/^echo: Estate snapshot/);
    expect(summary).toContain("staging-db-7");
    expect(JSON.parse(snapshot).servers.map((x: { name: string }) => x.name)).toEqual(["staging-db-7"]);
    expect((await api("POST", "/api/v1/mcp/tools/call", { token: narrow, body: { name: "get_overview", arguments: {} } })).body).toMatchObject({
      isError: true,
      content: [{ text: "access denied: you may not use the tool `get_overview`" }],
    });
  });
});

describe("GET /api/v1/overview/stream", () => {
  it("sends the current overview at once, then the next summary after a significant change", { timeout: OVERVIEW_POLL_MS * 2 + 10_000 }, async () => {
    const server = await serveOnFreePort(testApp(store.db, { config: { llm: llm() } }).app.fetch);
    try {
      const res = await fetch(`${server.url}/api/v1/overview/stream?connection_ids=${prod}`, { headers: { authorization: `Bearer ${root}` } });
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      let text = "";
      const nextEvent = async () => {
        for (;;) {
          const events = parseSse(text);
          if (events.length > seen) return { raw: text, event: events[seen++] };
          const { value, done } = await reader.read();
          if (done) throw new Error("stream ended");
          text += new TextDecoder().decode(value);
        }
      };
      let seen = 0;
      const first = await nextEvent();
      expect(first.event.event).toBe("overview");
      expect(first.raw).toMatch(/^id: \d{4}-\d\d-\d\dT/m);
      const alertsBefore = first.event.data.snapshot.alert_total;
      await raise(prod, "warning", "autovacuum behind on orders");
      const second = await nextEvent();
      expect(second.event.data.snapshot.alert_total).toBe(alertsBefore + 1);
      expect(second.event.data.summary).not.toBe(first.event.data.summary);
      await reader.cancel();
    } finally {
      await server.close();
    }
  });

  it("refuses before streaming when nothing asked for is visible", async () => {
    expect((await instance()("GET", `/api/v1/overview/stream?connection_ids=${prod}`, { token: narrow })).status).toBe(404);
  });
});
