/**
 * Over real HTTP: the stream arrives incrementally, a client that goes away cancels the provider request,
 * a quiet model gets keepalive comments; the timeout answers 504; token use is logged without content and
 * the daily token budget answers 429 with Retry-After once spent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, PAUSE_MS, USAGE, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { parseSse } from "../support/sse.ts";

let wire: WireServer;
let store: TestDatastore;
let token: string;
let userId: number;
let server: { url: string; close(): Promise<void> };

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  ({ token, id: userId } = await userWithToken(store.db, "streamer"));
  server = await serveOnFreePort(testApp(store.db, { config: { llm: llmSection(wire) } }).app.fetch);
});
afterAll(async () => {
  await server.close();
  await wire.close();
  await store.close();
});

const post = (path: string, body: unknown, signal?: AbortSignal) =>
  fetch(server.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });

async function until(check: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return check();
}

describe.each(["anthropic", "openai", "gemini", "ollama"] as const)("streaming from %s over HTTP", (provider) => {
  it("delivers the first delta before the provider has produced the last, and cancels the provider request when the client leaves", async () => {
    const res = await post("/api/v1/llm/chat/stream", { provider, model: "slow", messages: [{ role: "user", content: "go" }] });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("event: content_delta")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("stream ended before any delta");
      text += new TextDecoder().decode(value);
    }
    expect(wire.written.get("slow")).toBeLessThan(40);
    await reader.cancel();
    expect(await until(() => wire.abandoned.includes("slow"))).toBe(true);
    wire.abandoned.length = 0;
  });
});

describe("stream keepalive", () => {
  it(`sends a keepalive comment while the model is quiet for ${PAUSE_MS / 1000} s`, { timeout: PAUSE_MS + 15_000 }, async () => {
    const res = await post("/api/v1/llm/chat/stream", { provider: "openai", model: "pause", messages: [{ role: "user", content: "go" }] });
    const text = await res.text();
    const before = text.indexOf("before");
    const after = text.indexOf("after");
    const keepalive = text.indexOf(": keepalive\n\n");
    expect(before).toBeGreaterThan(0);
    expect(keepalive).toBeGreaterThan(before);
    expect(keepalive).toBeLessThan(after);
    expect(parseSse(text).at(-1)?.event).toBe("message_end");
  });
});

describe("timeouts", () => {
  it("answers 504 when the provider does not answer within llm.timeout_seconds, and ends a stream with an error event", async () => {
    const api = client(testApp(store.db, { config: { llm: llmSection(wire, KEYS, { timeout_seconds: 1 }) } }).app);
    const res = await api("POST", "/api/v1/llm/chat", { token, body: { provider: "anthropic", model: "stall", messages: [{ role: "user", content: "hi" }] } });
    expect(res).toMatchObject({ status: 504, body: { error: "anthropic did not answer within 1 s (llm.timeout_seconds)" } });
    const { app } = testApp(store.db, { config: { llm: llmSection(wire, KEYS, { timeout_seconds: 1 }) } });
    const streamed = await app.request("/api/v1/llm/chat/stream", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ provider: "openai", model: "stall", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(parseSse(await streamed.text()).at(-1)).toEqual({ event: "error", data: { error: "openai did not answer within 1 s (llm.timeout_seconds)" } });
  });
});

describe("token accounting", () => {
  it("logs each call's token counts without its content", async () => {
    const { app, logs } = testApp(store.db, { config: { llm: llmSection(wire) } });
    await client(app)("POST", "/api/v1/llm/chat", {
      token,
      body: { provider: "gemini", messages: [{ role: "user", content: "secret plans for the migration" }] },
    });
    expect(logs.filter((l) => l.msg === "llm usage")).toEqual([
      expect.objectContaining({
        user: "streamer",
        endpoint: "chat",
        provider: "gemini",
        prompt_tokens: USAGE.prompt,
        completion_tokens: USAGE.completion,
        total_tokens: USAGE.prompt + USAGE.completion,
      }),
    ]);
    expect(JSON.stringify(logs)).not.toContain("secret plans");
  });

  it("refuses with 429 and Retry-After once the day's budget is spent, counting chat, stream and embeddings", async () => {
    const budgeted = await userWithToken(store.db, "budgeted");
    const { app } = testApp(store.db, { config: { llm: llmSection(wire, KEYS, { daily_token_limit: 40 }) } });
    const api = client(app);
    const chat = () => api("POST", "/api/v1/llm/chat", { token: budgeted.token, body: { provider: "openai", messages: [{ role: "user", content: "hi" }] } });
    expect((await chat()).status).toBe(200);
    const streamed = await app.request("/api/v1/llm/chat/stream", {
      method: "POST",
      headers: { authorization: `Bearer ${budgeted.token}`, "content-type": "application/json" },
      body: JSON.stringify({ provider: "openai", messages: [{ role: "user", content: "hi" }] }),
    });
    await streamed.text();
    expect((await api("POST", "/api/v1/llm/embed", { token: budgeted.token, body: { provider: "openai", input: ["a", "b"] } })).status).toBe(200);
    const [{ tokens }] = await store.db.query<{ tokens: string }>("SELECT tokens FROM llm_token_usage WHERE user_id = $1", [budgeted.id]);
    expect(Number(tokens)).toBe(2 * (USAGE.prompt + USAGE.completion) + 6);
    const refused = await app.request("/api/v1/llm/chat", {
      method: "POST",
      headers: { authorization: `Bearer ${budgeted.token}`, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: "daily LLM token limit of 40 reached (llm.daily_token_limit); it resets at 00:00 UTC" });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    // Another user's budget is their own.
    expect((await api("POST", "/api/v1/llm/chat", { token, body: { provider: "openai", messages: [{ role: "user", content: "hi" }] } })).status).toBe(200);
    expect(userId).not.toBe(budgeted.id);
  });
});
