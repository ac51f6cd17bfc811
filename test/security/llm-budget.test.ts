/**
 * The daily LLM token budget under attack (#46 items 5, 6): a client that leaves a stream early, parallel calls
 * at the edge of the budget, and refreshes of the AI texts, against a local server speaking the providers' wire
 * formats and the real datastore's counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { KEYS, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";
import { serveOnFreePort } from "../support/node-server.ts";

const LIMIT = 300;
let wire: WireServer;
let store: TestDatastore;
let server: { url: string; close(): Promise<void> };

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  await addConnection(store.db, "billing-primary");
  await store.db.query("UPDATE connections SET is_shared = true");
  server = await serveOnFreePort(testApp(store.db, { config: { llm: llmSection(wire, { openai: KEYS.openai }, { daily_token_limit: LIMIT }) } }).app.fetch);
});
afterAll(async () => {
  await server.close();
  await wire.close();
  await store.close();
});

const request = (token: string, method: string, path: string, body?: unknown, signal?: AbortSignal) =>
  fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
const used = async (userId: number) =>
  Number((await store.db.query<{ tokens: string }>("SELECT coalesce(sum(tokens), 0) AS tokens FROM llm_token_usage WHERE user_id = $1", [userId]))[0].tokens);
const setUsed = (userId: number, tokens: number) =>
  store.db.query(
    "INSERT INTO llm_token_usage (user_id, day, tokens) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2) ON CONFLICT (user_id, day) DO UPDATE SET tokens = $2",
    [userId, tokens],
  );
const providerCalls = () => wire.requests.filter((r) => r.path.endsWith("/chat/completions")).length;

describe("a streamed chat", () => {
  it("is charged even when the client leaves before the end (once the text has come)", async () => {
    const user = await userWithToken(store.db, "leaver");
    const res = await request(user.token, "POST", "/api/v1/llm/chat/stream", {
      provider: "openai",
      model: "slow",
      messages: [{ role: "user", content: "tell me everything" }],
    });
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/event: content_delta/g) ?? []).length < 5) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const end = Date.now() + 5000;
    while ((await used(user.id)) > 1000 && Date.now() < end) await new Promise((r) => setTimeout(r, 50)); // the reservation is settled
    const charged = await used(user.id);
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(1000); // the prompt and what was streamed, not the whole reservation
  });
});

describe("parallel calls at the edge of the budget", () => {
  it("20 chats at 295 of 300 tokens: one runs, the others are refused before reaching the provider", async () => {
    const user = await userWithToken(store.db, "racer");
    await setUsed(user.id, LIMIT - 5);
    const before = providerCalls();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => request(user.token, "POST", "/api/v1/llm/chat", { provider: "openai", messages: [{ role: "user", content: "hi" }] })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(19);
    expect(providerCalls() - before).toBe(1);
    expect(await used(user.id)).toBe(LIMIT - 5 + 18); // one call's overshoot, settled to the provider's report
  });
});

describe("refreshing the AI texts", () => {
  it("is charged to the caller's budget: over budget, a refresh reaches no provider", async () => {
    const spent = await userWithToken(store.db, "spent", { superuser: true });
    await setUsed(spent.id, LIMIT);
    const before = providerCalls();
    for (let i = 0; i < 6; i++) {
      const res = await request(spent.token, "GET", "/api/v1/overview?refresh=true");
      expect(res.status).toBe(429);
      expect((await res.json()).error).toContain("daily LLM token limit");
    }
    expect(providerCalls()).toBe(before);
  });

  it("charges the caller for a refresh, and allows one a minute per text (429 with Retry-After)", async () => {
    const user = await userWithToken(store.db, "refresher", { superuser: true });
    const first = await request(user.token, "GET", "/api/v1/overview?refresh=true");
    expect(first.status).toBe(200);
    expect(await used(user.id)).toBe(18);
    const before = providerCalls();
    const again = await request(user.token, "GET", "/api/v1/overview?refresh=true");
    expect(again.status).toBe(429);
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(again.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(providerCalls()).toBe(before);
    // Without refresh, the shared text is served as before, free of charge.
    expect((await request(user.token, "GET", "/api/v1/overview")).status).toBe(200);
    expect(await used(user.id)).toBe(18);
  });
});
