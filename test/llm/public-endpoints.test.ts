/**
 * The public LLM endpoints: configured providers, live model lists and provider health. No token needed;
 * answers are kept 30 s so anonymous callers cannot turn them into load on a provider; failures name the
 * provider and its status, never a key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config.ts";
import { testApp } from "../support/app.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, type WireServer, llmSection, startWireServer } from "../support/llm-wire.ts";

let wire: WireServer;
let store: TestDatastore;
const apiWith = (llm: ReturnType<typeof llmSection>) => client(testApp(store.db, { config: { llm } }).app);

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
});
afterAll(async () => {
  await wire.close();
  await store.close();
});

describe("GET /api/v1/llm/providers", () => {
  it("lists only configured providers, the default first in configuration order, with the default model", async () => {
    const res = await apiWith(llmSection(wire, { openai: KEYS.openai, voyage: KEYS.voyage }))("GET", "/api/v1/llm/providers");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      providers: [
        { name: "openai", display: "OpenAI", isDefault: true, capabilities: ["chat", "embed"] },
        { name: "voyage", display: "Voyage AI", isDefault: false, capabilities: ["embed", "embed_images", "rerank"] },
      ],
      defaultModel: "gpt-4.1-mini",
    });
  });

  it("follows llm.provider and llm.model, and counts a keyless OpenAI-compatible or Ollama server by its URL", async () => {
    const llm = resolveConfig(
      {
        llm: {
          provider: "ollama",
          model: "qwen3:8b",
          providers: { ollama: { base_url: wire.baseUrl("ollama") }, openai: { base_url: wire.baseUrl("openai") }, anthropic: { headers: { "x-extra": "1" } } },
        },
      },
      {},
    ).llm;
    const res = await apiWith(llm)("GET", "/api/v1/llm/providers");
    expect(res.body.providers.map((p: { name: string; isDefault: boolean }) => [p.name, p.isDefault])).toEqual([
      ["openai", false],
      ["ollama", true],
    ]);
    expect(res.body.defaultModel).toBe("qwen3:8b");
  });

  it("is empty with no LLM configured", async () => {
    const res = await apiWith(resolveConfig({}, {}).llm)("GET", "/api/v1/llm/providers");
    expect(res.body).toEqual({ providers: [], defaultModel: null });
  });
});

describe("GET /api/v1/llm/models", () => {
  it.each([
    ["anthropic", [{ name: "claude-sonnet-4-5", description: "Claude Sonnet 4.5" }]],
    ["openai", [{ name: "gpt-4.1-mini" }]],
    ["gemini", [{ name: "gemini-2.5-flash", description: "Gemini 2.5 Flash" }]],
    ["ollama", [{ name: "llama3.2:latest" }]],
  ])("asks %s live, leaving out models that cannot chat", async (provider, models) => {
    const res = await apiWith(llmSection(wire))("GET", `/api/v1/llm/models?provider=${provider}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ provider, models });
  });

  it("keeps a provider's list for 30 s", async () => {
    const api = apiWith(llmSection(wire));
    const asked = () => wire.requests.filter((r) => r.provider === "openai" && r.path.endsWith("/models")).length;
    const before = asked();
    for (let i = 0; i < 5; i++) expect((await api("GET", "/api/v1/llm/models?provider=openai")).status).toBe(200);
    expect(asked() - before).toBe(1);
  });

  it("answers 400 for an unknown or unconfigured provider, 502 with the provider's status for its failure", async () => {
    const api = apiWith(llmSection(wire, { openai: "bad-key", anthropic: KEYS.anthropic }));
    const unknown = await api("GET", "/api/v1/llm/models?provider=cohere");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/provider.*anthropic, openai, gemini, ollama, voyage/);
    const unconfigured = await api("GET", "/api/v1/llm/models?provider=gemini");
    expect(unconfigured).toMatchObject({ status: 400, body: { error: "provider gemini is not configured: set PGLENS_LLM_GEMINI_API_KEY" } });
    const failed = await api("GET", "/api/v1/llm/models?provider=openai");
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatch(/^openai answered HTTP 401: Incorrect API key provided: \[redacted\]/);
    expect(failed.text).not.toContain("bad-key");
  });
});

describe("GET /api/v1/llm/health", () => {
  it("reports each provider ok, error or unconfigured from a live call, and keeps the report 30 s", async () => {
    const api = apiWith(llmSection(wire, { anthropic: KEYS.anthropic, openai: "bad-key", voyage: KEYS.voyage }));
    const before = wire.requests.length;
    const res = await api("GET", "/api/v1/llm/health");
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.providers.map((p: { name: string }) => [p.name, p]));
    expect(byName.anthropic).toEqual({ name: "anthropic", status: "ok", latency_ms: expect.any(Number) });
    expect(byName.voyage).toMatchObject({ name: "voyage", status: "ok" });
    expect(byName.openai).toMatchObject({ name: "openai", status: "error", error: expect.stringMatching(/^openai answered HTTP 401/) });
    expect(byName.gemini).toEqual({ name: "gemini", status: "unconfigured" });
    expect(byName.ollama).toEqual({ name: "ollama", status: "unconfigured" });
    expect(res.text).not.toContain("bad-key");
    const calls = wire.requests.length - before;
    expect(calls).toBe(3);
    for (let i = 0; i < 5; i++) await api("GET", "/api/v1/llm/health");
    expect(wire.requests.length - before).toBe(calls);
  });
});
