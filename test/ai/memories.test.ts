/**
 * Memories: stored with the store_memory tool, listed, pinned and deleted over REST, recalled by words or
 * (with pgvector and an embedding provider) by meaning; pinned ones join the chat's system prompt. The
 * ownership matrix: another user's memory is invisible (404), a system memory needs store_system_memory to
 * store, pin or delete (403), the tools need their MCP privileges.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setAdminGrants, setMcpGrants } from "../../src/datastore/groups.ts";
import { hasEmbeddings } from "../../src/datastore/memories.ts";
import { setTokenScope } from "../../src/datastore/api-tokens.ts";
import { issueApiToken } from "../../src/auth/issue-token.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { type TestDatastore, migratedDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";
import { fencedData } from "../support/fenced.ts";

let wire: WireServer;
let store: TestDatastore;
let api: ReturnType<typeof client>;
let ann: string;
let bob: string;
let keeper: string;
let outsider: string;

async function userInGroup(name: string, mcp: string[], admin: string[] = []) {
  const u = await userWithToken(store.db, name);
  const g = await createGroup(store.db, `${name}-group`, "");
  await setMcpGrants(store.db, g.id, mcp);
  await setAdminGrants(store.db, g.id, admin);
  await addMember(store.db, g.id, { type: "user", id: u.id });
  return u.token;
}

const tool = async (token: string, name: string, args: unknown) =>
  (await api("POST", "/api/v1/mcp/tools/call", { token, body: { name, arguments: args } })).body as { content: Array<{ text: string }>; isError: boolean };
const store_ = (token: string, args: Record<string, unknown>) => tool(token, "store_memory", { category: "note", ...args });
const idOf = (result: { content: Array<{ text: string }> }) => Number(result.content[0].text.match(/^Stored memory (\d+)/)![1]);

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db, { config: { llm: llmSection(wire, { anthropic: KEYS.anthropic }) } }).app);
  ann = await userInGroup("ann", ["store_memory", "recall_memories"]);
  bob = await userInGroup("bob", ["store_memory", "recall_memories"]);
  keeper = await userInGroup("keeper", ["store_memory", "recall_memories"], ["store_system_memory"]);
  outsider = (await userWithToken(store.db, "outsider")).token;
});
afterAll(async () => {
  await wire.close();
  await store.close();
});

describe("memories", () => {
  it("stores through the tool and lists the caller's own and the system's, never another user's", async () => {
    const mine = idOf(await store_(ann, { content: "ann prefers EXPLAIN (ANALYZE, BUFFERS)", category: "preference" }));
    const bobs = idOf(await store_(bob, { content: "bob's private note about the billing db" }));
    const system = idOf(await store_(keeper, { content: "maintenance is on Sundays at 03:00 UTC", scope: "system" }));
    const listed = (await api("GET", "/api/v1/memories", { token: ann })).body.memories;
    expect(listed.map((m: { id: number }) => m.id)).toEqual([system, mine]);
    expect(listed[1]).toEqual({
      id: mine,
      username: "ann",
      scope: "user",
      category: "preference",
      content: "ann prefers EXPLAIN (ANALYZE, BUFFERS)",
      pinned: false,
      model_name: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await api("GET", "/api/v1/memories?category=preference", { token: ann })).body.memories.map((m: { id: number }) => m.id)).toEqual([mine]);
    expect((await api("GET", "/api/v1/memories", { token: bob })).body.memories.map((m: { id: number }) => m.id)).toEqual([system, bobs]);
  });

  it("needs store_system_memory for system memories, and the MCP privileges for the tools", async () => {
    const refused = await store_(ann, { content: "everyone should see this", scope: "system" });
    expect(refused).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/needs the store_system_memory permission/) }] });
    const denied = await store_(outsider, { content: "x" });
    expect(denied).toMatchObject({ isError: true, content: [{ text: "access denied: you may not use the tool `store_memory`" }] });
    expect((await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE content IN ('everyone should see this', 'x')"))[0].n).toBe(0);
  });

  it("pins and deletes only what the caller may change: another user's is a 404, a system one a 403 without the permission", async () => {
    const mine = idOf(await store_(ann, { content: "ann's pin test" }));
    const bobs = idOf(await store_(bob, { content: "bob's pin test" }));
    const system = idOf(await store_(keeper, { content: "system pin test", scope: "system" }));
    expect((await api("PATCH", `/api/v1/memories/${mine}`, { token: ann, body: { pinned: true } })).body).toEqual({ id: mine, pinned: true });
    expect(await api("PATCH", `/api/v1/memories/${bobs}`, { token: ann, body: { pinned: true } })).toMatchObject({
      status: 404,
      body: { error: "memory not found" },
    });
    expect(await api("DELETE", `/api/v1/memories/${bobs}`, { token: ann })).toMatchObject({ status: 404 });
    expect(await api("PATCH", `/api/v1/memories/${system}`, { token: ann, body: { pinned: true } })).toMatchObject({
      status: 403,
      body: { error: "pinning a system memory needs the store_system_memory permission" },
    });
    expect(await api("DELETE", `/api/v1/memories/${system}`, { token: ann })).toMatchObject({
      status: 403,
      body: { error: "deleting a system memory needs the store_system_memory permission" },
    });
    const rows = await store.db.query<{ id: number; pinned: boolean }>("SELECT id, pinned FROM memories WHERE id = ANY($1::int[]) ORDER BY id", [
      [mine, bobs, system],
    ]);
    expect(rows).toEqual([
      { id: mine, pinned: true },
      { id: bobs, pinned: false },
      { id: system, pinned: false },
    ]);
    expect((await api("DELETE", `/api/v1/memories/${system}`, { token: keeper })).body).toEqual({ status: "deleted" });
    expect((await api("DELETE", `/api/v1/memories/${mine}`, { token: ann })).body).toEqual({ status: "deleted" });
    expect(await api("DELETE", `/api/v1/memories/${mine}`, { token: ann })).toMatchObject({ status: 404 });
  });

  it("adds the caller's pinned memories and the system's to the chat's system prompt, never another user's", async () => {
    await store_(ann, { content: "ann works on the orders cluster", category: "context", pinned: true });
    await store_(bob, { content: "bob's secret pinned fact", pinned: true });
    await store_(keeper, { content: "all times are UTC", category: "policy", scope: "system", pinned: true });
    const before = wire.requests.length;
    expect((await api("POST", "/api/v1/llm/chat", { token: ann, body: { messages: [{ role: "user", content: "hi" }] } })).status).toBe(200);
    const system = JSON.stringify(wire.requests.slice(before)[0].body.system);
    expect(system).toContain("<user-stored-memories>");
    expect(system).toContain("- [user/context] ann works on the orders cluster");
    expect(system).toContain("- [system/policy] all times are UTC");
    expect(system).not.toContain("bob's secret");
  });

  it("recalls by words when there is no embedding provider, best match first, pinned ones after, never another user's", async () => {
    await store_(ann, { content: "the replica lags during nightly vacuum", category: "incident" });
    await store_(ann, { content: "vacuum settings were raised last week" });
    await store_(bob, { content: "bob saw vacuum lag too" });
    const text = fencedData((await tool(ann, "recall_memories", { query: "replica vacuum lag" })).content[0].text);
    const lines = text.split("\n");
    expect(lines[0]).toBe("id\tscope\tcategory\tpinned\tscore\tcontent\tupdated_at");
    expect(lines[1]).toContain("the replica lags during nightly vacuum");
    expect(text).toContain("vacuum settings were raised last week");
    expect(text).toContain("ann works on the orders cluster"); // pinned, listed although it does not match
    expect(text).not.toContain("bob saw");
  });

  it("recalls by meaning with pgvector and an embedding provider", async () => {
    expect(await hasEmbeddings(store.db)).toBe(true);
    const withEmbeddings = client(testApp(store.db, { config: { llm: llmSection(wire, { openai: KEYS.openai }) } }).app);
    const call = async (name: string, args: unknown) =>
      (await withEmbeddings("POST", "/api/v1/mcp/tools/call", { token: ann, body: { name, arguments: args } })).body.content[0].text as string;
    expect(await call("store_memory", { content: "standby promotion runbook lives in the wiki", category: "runbook" })).toContain(
      "search: embedded with openai/text-embedding-3-small",
    );
    await call("store_memory", { content: "unrelated fact about cron", category: "runbook" });
    const [, first] = fencedData(await call("recall_memories", { query: "standby promotion runbook lives in the wiki", category: "runbook" })).split("\n");
    expect(first).toMatch(/\trunbook\tfalse\t1\tstandby promotion runbook lives in the wiki\t/);
    const [{ n }] = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE embedding IS NOT NULL");
    expect(n).toBe(2);
  });

  it("holds a scoped token to its scope: no store_memory in it, no storing; no store_system_memory in it, no system memories", async () => {
    const recallOnly = await issueApiToken(store.db, { owner: "keeper" });
    await setTokenScope(store.db, recallOnly.id, { connections: [], mcp_privileges: ["recall_memories"], admin_permissions: [] });
    expect(await store_(recallOnly.token, { content: "from a recall-only token" })).toMatchObject({
      isError: true,
      content: [{ text: "access denied: you may not use the tool `store_memory`" }],
    });
    const noAdmin = await issueApiToken(store.db, { owner: "keeper" });
    await setTokenScope(store.db, noAdmin.id, { connections: [], mcp_privileges: ["store_memory", "recall_memories"], admin_permissions: [] });
    expect((await store_(noAdmin.token, { content: "system fact from a narrowed token", scope: "system" })).isError).toBe(true);
    const system = idOf(await store_(keeper, { content: "system fact for the scope test", scope: "system" }));
    expect(await api("PATCH", `/api/v1/memories/${system}`, { token: noAdmin.token, body: { pinned: true } })).toMatchObject({ status: 403 });
    expect(await api("DELETE", `/api/v1/memories/${system}`, { token: noAdmin.token })).toMatchObject({ status: 403 });
    const [{ n }] = await store.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memories WHERE content IN ('from a recall-only token', 'system fact from a narrowed token') OR (id = $1 AND pinned)",
      [system],
    );
    expect(n).toBe(0);
  });

  it("refuses bad input", async () => {
    expect((await store_(ann, { content: "" })).isError).toBe(true);
    expect((await api("PATCH", "/api/v1/memories/1", { token: ann, body: { pinned: "yes" } })).status).toBe(400);
    expect((await api("GET", "/api/v1/memories?limit=500", { token: ann })).status).toBe(400);
    expect((await api("GET", "/api/v1/memories")).status).toBe(401);
  });
});

describe("memories on a datastore without pgvector", () => {
  it("has no embedding column and finds memories by words even with an embedding provider", async () => {
    const pg = await migratedDatastore("pg");
    try {
      expect(await hasEmbeddings(pg.db)).toBe(false);
      const user = await userWithToken(pg.db, "plain", { superuser: true });
      const plain = client(testApp(pg.db, { config: { llm: llmSection(wire, { openai: KEYS.openai }) } }).app);
      const call = async (name: string, args: unknown) =>
        (await plain("POST", "/api/v1/mcp/tools/call", { token: user.token, body: { name, arguments: args } })).body.content[0].text as string;
      expect(await call("store_memory", { content: "wal archiving goes to s3", category: "ops" })).toContain(
        "search: the datastore has no pgvector: found by words",
      );
      expect(await call("recall_memories", { query: "archiving" })).toContain("wal archiving goes to s3");
    } finally {
      await pg.close();
    }
  });
});
