/**
 * Embeddings (OpenAI, Gemini, Ollama, Voyage), multimodal embeddings (Voyage) and reranking (Voyage, and
 * the BM25 fallback with no rerank provider) against the local wire-format servers; clear 400s for what a
 * provider cannot do and for oversized requests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bm25Scores } from "../../src/llm/bm25.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { KEYS, type WireServer, llmSection, startWireServer, vectorOf } from "../support/llm-wire.ts";

let wire: WireServer;
let store: TestDatastore;
let token: string;

const apiWith = (llm: ReturnType<typeof llmSection>) => client(testApp(store.db, { config: { llm } }).app);

beforeAll(async () => {
  wire = await startWireServer();
  store = await migratedDatastore("pglite");
  token = (await userWithToken(store.db, "embedder")).token;
});
afterAll(async () => {
  await wire.close();
  await store.close();
});

describe.each(["openai", "gemini", "ollama", "voyage"] as const)("embeddings through %s", (provider) => {
  it("embeds many texts in order, and one text", async () => {
    const api = apiWith(llmSection(wire));
    const many = await api("POST", "/api/v1/llm/embed", { token, body: { provider, input: ["alpha", "beta", "gamma"] } });
    expect(many.status, many.text).toBe(200);
    expect(many.body.embeddings).toEqual(["alpha", "beta", "gamma"].map((t) => vectorOf(t)));
    expect(many.body.dimensions).toBe(8);
    expect(many.body.model).toEqual(expect.any(String));
    const one = await api("POST", "/api/v1/llm/embed", { token, body: { provider, input: "delta" } });
    expect(one.body.embeddings).toEqual([vectorOf("delta")]);
  });

  it("asks the provider for the requested dimensions", async () => {
    const res = await apiWith(llmSection(wire))("POST", "/api/v1/llm/embed", { token, body: { provider, input: ["alpha"], dimensions: 4 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ dimensions: 4, embeddings: [vectorOf("alpha", 4)] });
  });
});

describe("embedding requests", () => {
  it("uses the configured embedding provider and model by default", async () => {
    const api = apiWith(llmSection(wire, KEYS, { embedding: { provider: "ollama", model: "mxbai-embed-large" } }));
    const before = wire.requests.length;
    const res = await api("POST", "/api/v1/llm/embed", { token, body: { input: "x" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.model).toBe("mxbai-embed-large");
    expect(wire.requests.slice(before).map((r) => [r.provider, r.body.model])).toEqual([["ollama", "mxbai-embed-large"]]);
  });

  it("refuses what cannot work with a 400 that says why", async () => {
    const api = apiWith(llmSection(wire));
    const cases: Array<[unknown, RegExp]> = [
      [{ input: [] }, /input: 1 to 256 texts per request \(got 0\)/],
      [{ input: Array.from({ length: 257 }, () => "x") }, /input: 1 to 256 texts per request \(got 257\)/],
      [{ input: 5 }, /input: a text or a list of texts/],
      [{ input: "x", provider: "anthropic" }, /provider anthropic cannot embed text; providers that can: openai, gemini, ollama, voyage/],
      [{ input: "x", provider: "cohere" }, /provider/],
      [{ input: "x", model: "bad model!" }, /model/],
      [{ input: "x", dimensions: 0 }, /dimensions/],
    ];
    for (const [body, message] of cases) {
      const res = await api("POST", "/api/v1/llm/embed", { token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(message);
    }
  });

  it("says which variable to set when no embedding provider is configured", async () => {
    const res = await apiWith(llmSection(wire, { anthropic: KEYS.anthropic }))("POST", "/api/v1/llm/embed", { token, body: { input: "x" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/no LLM provider that can embed text is configured: set .*PGLENS_LLM_<NAME>_API_KEY/);
  });

  it("needs a token", async () => {
    const res = await apiWith(llmSection(wire))("POST", "/api/v1/llm/embed", { body: { input: "x" } });
    expect(res.status).toBe(401);
  });
});

describe("multimodal embeddings", () => {
  const PNG = Buffer.from("not really a png").toString("base64");

  it("embeds text and images (base64 and URL) through Voyage, one vector per input", async () => {
    const api = apiWith(llmSection(wire));
    const before = wire.requests.length;
    const res = await api("POST", "/api/v1/llm/embed/multimodal", {
      token,
      body: {
        inputs: [
          { type: "text", text: "a slow query plan" },
          { type: "image", data: PNG, mime_type: "image/png" },
          { type: "image", url: "https://example.com/chart.png" },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.embeddings).toHaveLength(3);
    expect(res.body.model).toBe("voyage-multimodal-3");
    const sent = wire.requests.slice(before).find((r) => r.path.endsWith("/multimodalembeddings"))!;
    expect(sent.body.inputs).toEqual([
      { content: [{ type: "text", text: "a slow query plan" }] },
      { content: [{ type: "image_base64", image_base64: `data:image/png;base64,${PNG}` }] },
      { content: [{ type: "image_url", image_url: "https://example.com/chart.png" }] },
    ]);
  });

  it("names the limitation when the provider cannot embed images", async () => {
    const res = await apiWith(llmSection(wire))("POST", "/api/v1/llm/embed/multimodal", {
      token,
      body: { provider: "openai", inputs: [{ type: "text", text: "x" }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("provider openai cannot embed images; providers that can: voyage");
    const none = await apiWith(llmSection(wire, { openai: KEYS.openai }))("POST", "/api/v1/llm/embed/multimodal", {
      token,
      body: { inputs: [{ type: "text", text: "x" }] },
    });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatch(/no LLM provider that can embed images is configured/);
  });

  it("refuses an image with neither or both of data and url, or data without its type", async () => {
    const api = apiWith(llmSection(wire));
    for (const image of [
      { type: "image" },
      { type: "image", data: PNG, url: "https://example.com/a.png", mime_type: "image/png" },
      { type: "image", data: PNG },
    ]) {
      const res = await api("POST", "/api/v1/llm/embed/multimodal", { token, body: { inputs: [image] } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/inputs\[0\]: (an image needs exactly one of data \(base64\) or url|mime_type is required with data)/);
    }
  });
});

describe("reranking", () => {
  const DOCS = ["vacuum settings for large tables", "checkpoint tuning", "autovacuum on large tables lags"];

  it("asks the rerank provider and returns its order with the documents", async () => {
    const res = await apiWith(llmSection(wire, KEYS, { rerank: { provider: "voyage" } }))("POST", "/api/v1/llm/rerank", {
      token,
      body: { query: "large tables vacuum", documents: DOCS, top_n: 2 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.method).toBe("voyage/rerank-2.5");
    expect(res.body.results).toEqual([
      { index: 0, score: 0.3, document: DOCS[0] },
      { index: 2, score: 0.2, document: DOCS[2] },
    ]);
  });

  it("falls back to local BM25 when no rerank provider is configured, without calling any provider", async () => {
    const before = wire.requests.length;
    const res = await apiWith(llmSection(wire, { openai: KEYS.openai }))("POST", "/api/v1/llm/rerank", {
      token,
      body: { query: "large tables vacuum", documents: DOCS },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.method).toBe("bm25");
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([0, 2, 1]);
    expect(res.body.results[2].score).toBe(0);
    expect(wire.requests.length).toBe(before);
  });

  it("refuses empty input", async () => {
    const api = apiWith(llmSection(wire));
    expect((await api("POST", "/api/v1/llm/rerank", { token, body: { query: "", documents: DOCS } })).body.error).toMatch(/query/);
    expect((await api("POST", "/api/v1/llm/rerank", { token, body: { query: "x", documents: [] } })).body.error).toMatch(/documents: at least one/);
  });
});

describe("BM25", () => {
  it("ranks a document with more of the rarer query terms higher, and shorter documents above longer ones with the same matches", () => {
    const [a, b, c, d] = bm25Scores("replication lag", [
      "replication lag on the standby",
      "replication slots",
      "lag",
      "replication lag on the standby after a long checkpoint and a vacuum",
    ]);
    expect(a).toBeGreaterThan(b);
    expect(a).toBeGreaterThan(c);
    expect(a).toBeGreaterThan(d);
    expect(bm25Scores("nothing", ["replication lag"])).toEqual([0]);
  });
});
