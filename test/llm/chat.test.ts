/**
 * The chat proxy against local servers speaking each provider's wire format: one turn with text, a tool
 * round trip, the streamed form, the system prompt (persona + current user), and provider failures that
 * name the provider and its status but never the key, in responses or logs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config.ts";
import type { LlmProviderName } from "../../src/llm-config.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, TOOL_INPUT, USAGE, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";
import { parseSse, readSse } from "../support/sse.ts";

const CHAT_PROVIDERS = ["anthropic", "openai", "gemini", "ollama"] as const;

let wire: WireServer;
let store: TestDatastore;
let token: string;

function appWith(llm: ReturnType<typeof llmSection>) {
  const built = testApp(store.db, { config: { llm } });
  return { api: client(built.app), app: built.app, logs: built.logs };
}

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  token = (await userWithToken(store.db, "dba_ann")).token;
  await store.db.query("UPDATE users SET display_name = 'Ann Example', annotation = 'on call this week' WHERE username = 'dba_ann'");
});
afterAll(async () => {
  await wire.close();
  await store.close();
});

const TOOLS = [
  {
    name: "query_metrics",
    description: "Query collected metrics",
    inputSchema: { type: "object", properties: { probe: { type: "string" } }, required: ["probe"] },
  },
];

describe.each(CHAT_PROVIDERS)("chat through %s", (provider) => {
  it("answers one turn with text and token usage, sending the key and the system prompt upstream", async () => {
    const { api } = appWith(llmSection(wire));
    const before = wire.requests.length;
    const res = await api("POST", "/api/v1/llm/chat", { token, body: { provider, messages: [{ role: "user", content: "how busy is prod?" }] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.content).toEqual([{ type: "text", text: "echo: how busy is prod?" }]);
    expect(res.body.stop_reason).toBe("end_turn");
    expect(res.body.token_usage).toMatchObject({
      provider,
      prompt_tokens: USAGE.prompt,
      completion_tokens: USAGE.completion,
      total_tokens: USAGE.prompt + USAGE.completion,
    });
    const sent = wire.requests.slice(before).find((r) => r.provider === provider)!;
    expect(JSON.stringify(sent.headers)).toContain(KEYS[provider]);
    const system = JSON.stringify(sent.body);
    expect(system).toContain("pglens assistant");
    expect(system).toContain("<current-user>");
    expect(system).toContain("Username: dba_ann");
    expect(system).toContain("Display name: Ann Example");
    expect(system).toContain("Role: Standard user");
  });

  it("returns tool calls, and forwards the client's tool results on the next turn", async () => {
    const { api } = appWith(llmSection(wire));
    const first = await api("POST", "/api/v1/llm/chat", {
      token,
      body: { provider, tools: TOOLS, messages: [{ role: "user", content: "please use a tool" }] },
    });
    expect(first.status, first.text).toBe(200);
    expect(first.body.stop_reason).toBe("tool_use");
    const call = first.body.content.find((b: { type: string }) => b.type === "tool_use");
    expect(call).toMatchObject({ type: "tool_use", name: "query_metrics", input: TOOL_INPUT });
    const before = wire.requests.length;
    const second = await api("POST", "/api/v1/llm/chat", {
      token,
      body: {
        provider,
        tools: TOOLS,
        messages: [
          { role: "user", content: "please use a tool" },
          { role: "assistant", content: first.body.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "42 commits per second" }] },
        ],
      },
    });
    expect(second.status, second.text).toBe(200);
    expect(JSON.stringify(wire.requests.slice(before).find((r) => r.provider === provider)!.body)).toContain("42 commits per second");
  });

  it("streams message_start, text deltas in order and message_end", async () => {
    const { app } = appWith(llmSection(wire));
    const res = await app.request("/api/v1/llm/chat/stream", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ provider, messages: [{ role: "user", content: "stream it" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    expect(events[0]).toEqual({ event: "message_start", data: { provider, model: expect.any(String) } });
    const deltas = events.filter((e) => e.event === "content_delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.data.index === 0 && d.data.type === "text")).toBe(true);
    expect(deltas.map((d) => d.data.text).join("")).toBe("echo: stream it");
    expect(events.at(-1)).toEqual({
      event: "message_end",
      data: { stop_reason: "end_turn", token_usage: expect.objectContaining({ prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion }) },
    });
  });

  it("streams a tool call as one complete tool_use event", async () => {
    const { app } = appWith(llmSection(wire));
    const res = await app.request("/api/v1/llm/chat/stream", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ provider, tools: TOOLS, messages: [{ role: "user", content: "use a tool now" }] }),
    });
    const events = await readSse(res);
    const tools = events.filter((e) => e.event === "tool_use");
    expect(tools).toEqual([{ event: "tool_use", data: { index: 0, type: "tool_use", id: expect.any(String), name: "query_metrics", input: TOOL_INPUT } }]);
    expect(events.at(-1)?.data.stop_reason).toBe("tool_use");
  });

  it("answers a provider's refusal with 502 naming the provider and its status, never the key", async () => {
    const bad = { [provider]: "bad-key" } as Partial<Record<LlmProviderName, string>>;
    const { api, app, logs } = appWith(llmSection(wire, bad));
    const res = await api("POST", "/api/v1/llm/chat", { token, body: { provider, messages: [{ role: "user", content: "hi" }] } });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatch(new RegExp(`^${provider} answered HTTP (401|400)`));
    expect(res.text).not.toContain("bad-key");
    const streamed = await app.request("/api/v1/llm/chat/stream", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ provider, messages: [{ role: "user", content: "hi" }] }),
    });
    const text = await streamed.text();
    expect(parseSse(text).at(-1)).toEqual({ event: "error", data: { error: expect.stringMatching(new RegExp(`^${provider} answered HTTP (401|400)`)) } });
    expect(text).not.toContain("bad-key");
    expect(JSON.stringify(logs)).not.toContain("bad-key");
  });
});

describe("provider settings reach the wire", () => {
  it("sends custom headers, and no Authorization header at all to a keyless OpenAI-compatible server", async () => {
    const llm = resolveConfig({ llm: { providers: { openai: { base_url: wire.baseUrl("openai"), headers: { "X-Team": "dba" } } } } }, {}).llm;
    const { api } = appWith(llm);
    const before = wire.requests.length;
    const res = await api("POST", "/api/v1/llm/chat", { token, body: { messages: [{ role: "user", content: "local model" }] } });
    expect(res.status, res.text).toBe(200);
    const sent = wire.requests.slice(before)[0];
    expect(sent.provider).toBe("openai");
    expect(sent.headers["x-team"]).toBe("dba");
    expect(sent.headers.authorization).toBeUndefined();
  });

  it("uses the configured default provider and model, and the request's own when given", async () => {
    const { api } = appWith(llmSection(wire, KEYS, { provider: "gemini", model: "gemini-2.5-pro" }));
    const before = wire.requests.length;
    await api("POST", "/api/v1/llm/chat", { token, body: { messages: [{ role: "user", content: "a" }] } });
    await api("POST", "/api/v1/llm/chat", { token, body: { provider: "anthropic", messages: [{ role: "user", content: "b" }] } });
    await api("POST", "/api/v1/llm/chat", { token, body: { provider: "openai", model: "my-finetune", messages: [{ role: "user", content: "c" }] } });
    expect(wire.requests.slice(before).map((r) => [r.provider, r.body.model ?? r.path])).toEqual([
      ["gemini", "/gemini/v1beta/models/gemini-2.5-pro:generateContent"],
      ["anthropic", "claude-sonnet-4-5"],
      ["openai", "my-finetune"],
    ]);
  });
});
