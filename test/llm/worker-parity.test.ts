/**
 * Runtime parity of the LLM proxy: chat, the streamed chat and embeddings answer alike from Node and from
 * the Workers bundle in workerd, with the providers configured by bindings, against the same wire servers.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { migrate } from "../../src/datastore/migrate.ts";
import { resolveConfig } from "../../src/config.ts";
import { testApp } from "../support/app.ts";
import { bearer, userWithToken } from "../support/auth.ts";
import { KEYS, type WireServer, startWireServer } from "../support/llm-wire.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { createTestDatabase } from "../support/postgres.ts";
import { parseSse } from "../support/sse.ts";
import { type TestWorker, startWorker } from "../support/worker.ts";

let wire: WireServer;
let database: { url: string; drop(): Promise<void> };
let db: Driver;
let node: { url: string; close(): Promise<void> };
let worker: TestWorker;
let auth: Record<string, string>;

beforeAll(async () => {
  wire = await startWireServer();
  database = await createTestDatabase(inject("pg17Url"));
  db = openPg(database.url);
  await migrate(db);
  auth = bearer((await userWithToken(db, "edge_user")).token);
  const bindings = {
    PGLENS_DATASTORE_URL: database.url,
    PGLENS_LLM_PROVIDER: "anthropic",
    PGLENS_LLM_ANTHROPIC_API_KEY: KEYS.anthropic,
    PGLENS_LLM_ANTHROPIC_BASE_URL: wire.baseUrl("anthropic"),
    PGLENS_LLM_OPENAI_API_KEY: KEYS.openai,
    PGLENS_LLM_OPENAI_BASE_URL: wire.baseUrl("openai"),
    PGLENS_LLM_GEMINI_API_KEY: KEYS.gemini,
    PGLENS_LLM_GEMINI_BASE_URL: wire.baseUrl("gemini"),
  };
  node = await serveOnFreePort(testApp(db, { config: { llm: resolveConfig({}, bindings).llm } }).app.fetch);
  worker = await startWorker(bindings);
});
afterAll(async () => {
  await worker?.dispose();
  await node?.close();
  await db?.close();
  await database?.drop();
  await wire?.close();
});

/** Gemini has no tool call ids: the SDK makes up a random one per call. */
const anyToolId = (body: unknown) => JSON.parse(JSON.stringify(body).replace(/"id":"[^"]+"/g, '"id":"*"'));

const post = (body: unknown): RequestInit => ({ method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the LLM proxy on Node and on workerd", () => {
  it.each([
    ["/api/v1/llm/providers", null, 200],
    ["/api/v1/llm/chat", { messages: [{ role: "user", content: "hello from the edge" }] }, 200],
    [
      "/api/v1/llm/chat",
      { provider: "gemini", tools: [{ name: "list_probes", inputSchema: { type: "object" } }], messages: [{ role: "user", content: "use a tool" }] },
      200,
    ],
    ["/api/v1/llm/embed", { provider: "openai", input: ["a", "b"], dimensions: 4 }, 200],
    ["/api/v1/llm/chat", { provider: "ollama", messages: [{ role: "user", content: "not configured" }] }, 400],
  ] as const)("%s %j answers alike", async (path, body, status) => {
    const init = body ? post(body) : undefined;
    const fromNode = await fetch(node.url + path, init);
    const fromWorker = await worker.fetch(path, init);
    const nodeBody = anyToolId(await fromNode.json());
    expect(fromNode.status, JSON.stringify(nodeBody)).toBe(status);
    expect({ status: fromWorker.status, body: anyToolId(await fromWorker.json()) }).toEqual({ status: fromNode.status, body: nodeBody });
  });

  it("streams the same events", async () => {
    const init = post({ provider: "openai", messages: [{ role: "user", content: "stream at the edge" }] });
    const fromNode = parseSse(await (await fetch(`${node.url}/api/v1/llm/chat/stream`, init)).text());
    const res = await worker.fetch("/api/v1/llm/chat/stream", init);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const fromWorker = parseSse(await res.text());
    expect(fromWorker).toEqual(fromNode);
    expect(
      fromWorker
        .filter((e) => e.event === "content_delta")
        .map((e) => e.data.text)
        .join(""),
    ).toBe("echo: stream at the edge");
  });
});
