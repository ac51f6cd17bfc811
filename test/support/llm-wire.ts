/**
 * Local stand-ins for the hosted LLM providers (a cloud model cannot be reached here): one HTTP server that
 * speaks each provider's own wire format under its own prefix, streaming formats and error bodies included.
 *   /anthropic/v1  Messages (JSON and SSE), models
 *   /openai/v1     Chat Completions (JSON and SSE), embeddings, models
 *   /gemini/v1beta generateContent, streamGenerateContent?alt=sse, embedContent, batchEmbedContents, models
 *   /ollama/api    chat (JSON and NDJSON), embed, tags
 *   /voyage/v1     embeddings, multimodalembeddings, rerank
 * The model's behaviour is scripted by the last user text: it contains "use a tool" (and tools were offered)
 * -> a call of the first tool with {"probe": "pg_stat_database"}; otherwise the reply is "echo: <text>" in
 * three stream chunks; the models in JUDGES answer a fixed text (a classification, a server analysis). Model "slow" streams 40 chunks 100 ms apart; model "pause" pauses 16 s after its
 * first chunk; model "lazy" answers after 400 ms; model "stall" never answers. The key "bad-key", or any key starting "reject-", gets the
 * provider's 401 (whose message quotes the key, as some providers do).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolveConfig } from "../../src/config.ts";
import type { LlmProviderName } from "../../src/llm-config.ts";
import { outliveClientKeepAlive } from "./node-server.ts";

export interface WireRequest {
  provider: string;
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export interface WireServer {
  url: string;
  baseUrl(provider: "anthropic" | "openai" | "gemini" | "ollama" | "voyage"): string;
  requests: WireRequest[];
  /** Streams the client went away from before the last chunk was written. */
  abandoned: string[];
  /** Chunks written so far per stream, by model name. */
  written: Map<string, number>;
  close(): Promise<void>;
}

/** Keys long enough that a masked quote of one ("sk-ope...cdef") would be recognised. */
export const KEYS: Record<LlmProviderName, string> = {
  anthropic: "ant-key-0123456789abcdef",
  openai: "sk-openai-0123456789abcdef",
  gemini: "gem-key-0123456789abcdef",
  ollama: "oll-key-0123456789abcdef",
  voyage: "voy-key-0123456789abcdef",
};

/** The llm configuration section with the given providers pointed at the wire server. */
export function llmSection(wire: WireServer, keys: Partial<Record<LlmProviderName, string>> = KEYS, extra: Record<string, unknown> = {}) {
  const providers = Object.fromEntries(Object.entries(keys).map(([p, key]) => [p, { api_key: key, base_url: wire.baseUrl(p as LlmProviderName) }]));
  return resolveConfig({ llm: { providers, ...extra } }, {}).llm;
}

export const USAGE = { prompt: 11, completion: 7 };
export const TOOL_INPUT = { probe: "pg_stat_database" };

type Reply = { text: string; tool?: string };

/** A deterministic vector for a text: same text, same vector. */
export function vectorOf(text: string, dims = 8): number[] {
  let h = 7;
  for (const ch of text) h = (h * 31 + ch.codePointAt(0)!) % 1_000_003;
  return Array.from({ length: dims }, (_, j) => ((h * (j + 3)) % 997) / 997);
}

/** Model "lazy" answers after this long (time for a second instance to ask meanwhile). */
export const LAZY_MS = 400;

/** Model "pause" stays silent this long after its first words: longer than the proxy's keepalive period. */
export const PAUSE_MS = 16_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lastUserText(texts: string[]): string {
  return texts.filter(Boolean).at(-1) ?? "";
}

/** Models that answer like a classifier, whatever they are asked (the alerter's anomaly review). */
export const JUDGES: Record<string, string> = {
  "judge-suppress": '{"decision": "suppress", "confidence": 0.9, "reasoning": "the nightly batch does this"}',
  "judge-alert": 'Here is my answer: {"decision": "alert", "confidence": 0.8, "reasoning": "nothing explains it"}',
  "judge-unsure": '{"decision": "suppress", "confidence": 0.2, "reasoning": "maybe the batch"}',
  "judge-prose": "I would suppress this one; it looks like routine maintenance.",
  // A server analysis with the purposes of its databases (and one database the server does not have).
  analyst: "- shared_buffers is small for 8 GB: raise it to 2GB.\n\n**DATABASES**\n- `billing`: invoices and payments\n- ghost: not on this server\n",
};

function decide(lastText: string, tools: string[], model: string): Reply {
  if (JUDGES[model]) return { text: JUDGES[model] };
  if (lastText.includes("use a tool") && tools.length) return { text: "", tool: tools[0] };
  return { text: `echo: ${lastText}` };
}

function chunks(model: string, text: string): string[] {
  if (model === "slow") return Array.from({ length: 40 }, (_, i) => `part${i} `);
  if (model === "pause") return ["before ", "after"];
  const third = Math.ceil(text.length / 3);
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)].filter(Boolean);
}

async function readBody(req: IncomingMessage): Promise<any> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  const text = Buffer.concat(parts).toString();
  return text ? JSON.parse(text) : undefined;
}

const refused = (key: unknown) => key === "bad-key" || (typeof key === "string" && key.startsWith("reject-"));

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

export async function startWireServer(): Promise<WireServer> {
  const requests: WireRequest[] = [];
  const abandoned: string[] = [];
  const written = new Map<string, number>();

  /** Writes a stream's chunks with the model's pace, noting a client that leaves early. */
  async function stream(_req: IncomingMessage, res: ServerResponse, model: string, contentType: string, pieces: string[]) {
    res.writeHead(200, { "content-type": contentType, "cache-control": "no-cache" });
    let gone = false;
    res.on("close", () => {
      gone = !res.writableFinished;
    });
    written.set(model, 0);
    for (const piece of pieces) {
      if (gone) {
        abandoned.push(model);
        return;
      }
      res.write(piece);
      written.set(model, (written.get(model) ?? 0) + 1);
      await sleep(model === "slow" ? 100 : model === "pause" && piece.includes("before") ? PAUSE_MS : 1);
    }
    res.end();
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, "http://wire");
    const [, provider, ...rest] = url.pathname.split("/");
    const path = `/${rest.join("/")}`;
    const body = await readBody(req);
    requests.push({ provider, method: req.method!, path: url.pathname + url.search, headers: req.headers, body });
    const model: string = body?.model ?? decodeURIComponent(path.match(/models\/([^:]+):/)?.[1] ?? "");
    if (model === "stall") return; // never answers: the caller's timeout must end it
    if (model === "lazy") await sleep(LAZY_MS);
    try {
      switch (provider) {
        case "anthropic":
          return await anthropic(req, res, path, body, model);
        case "openai":
          return await openai(req, res, path, body, model);
        case "gemini":
          return await gemini(req, res, path, url, body, model);
        case "ollama":
          return await ollama(req, res, path, body, model);
        case "voyage":
          return voyage(req, res, path, body, model);
      }
      json(res, 404, { error: `no such provider ${provider}` });
    } catch (err) {
      json(res, 500, { error: String(err) });
    }
  });

  async function anthropic(req: IncomingMessage, res: ServerResponse, path: string, body: any, model: string) {
    const key = req.headers["x-api-key"];
    if (refused(key)) return json(res, 401, { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${key}` } });
    if (path === "/v1/models")
      return json(res, 200, { data: [{ id: "claude-sonnet-4-5", display_name: "Claude Sonnet 4.5", type: "model" }], has_more: false });
    const texts = body.messages
      .filter((m: any) => m.role === "user")
      .flatMap((m: any) => (typeof m.content === "string" ? [m.content] : m.content.filter((b: any) => b.type === "text").map((b: any) => b.text)));
    const reply = decide(
      lastUserText(texts),
      (body.tools ?? []).map((t: any) => t.name),
      model,
    );
    const usage = { input_tokens: USAGE.prompt, output_tokens: USAGE.completion };
    const stop = reply.tool ? "tool_use" : "end_turn";
    if (!body.stream) {
      const content = reply.tool ? [{ type: "tool_use", id: "toolu_1", name: reply.tool, input: TOOL_INPUT }] : [{ type: "text", text: reply.text }];
      return json(res, 200, { id: "msg_1", type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null, usage });
    }
    const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const pieces = [
      ev("message_start", {
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: USAGE.prompt, output_tokens: 0 },
        },
      }),
    ];
    if (reply.tool) {
      pieces.push(ev("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_1", name: reply.tool, input: {} } }));
      const args = JSON.stringify(TOOL_INPUT);
      pieces.push(ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: args.slice(0, 5) } }));
      pieces.push(ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: args.slice(5) } }));
    } else {
      pieces.push(ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
      for (const c of chunks(model, reply.text)) pieces.push(ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: c } }));
    }
    pieces.push(
      ev("content_block_stop", { index: 0 }),
      ev("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: USAGE.completion } }),
      ev("message_stop", {}),
    );
    await stream(req, res, model, "text/event-stream", pieces);
  }

  async function openai(req: IncomingMessage, res: ServerResponse, path: string, body: any, model: string) {
    const key = req.headers.authorization?.replace(/^Bearer /, "");
    if (refused(key))
      return json(res, 401, {
        error: {
          message: `Incorrect API key provided: ${key}. You can find your API key in your account settings.`,
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      });
    if (path === "/v1/models")
      return json(res, 200, {
        object: "list",
        data: [
          { id: "gpt-4.1-mini", object: "model" },
          { id: "text-embedding-3-small", object: "model" },
        ],
      });
    if (path === "/v1/embeddings") {
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      return json(res, 200, {
        object: "list",
        model,
        data: inputs.map((t, index) => ({ object: "embedding", index, embedding: vectorOf(t, body.dimensions) })),
        usage: { prompt_tokens: inputs.length * 3, total_tokens: inputs.length * 3 },
      });
    }
    const texts = body.messages
      .filter((m: any) => m.role === "user")
      .flatMap((m: any) => (typeof m.content === "string" ? [m.content] : m.content.filter((b: any) => b.type === "text").map((b: any) => b.text)));
    const reply = decide(
      lastUserText(texts),
      (body.tools ?? []).map((t: any) => t.function.name),
      model,
    );
    const usage = { prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion, total_tokens: USAGE.prompt + USAGE.completion };
    const finish = reply.tool ? "tool_calls" : "stop";
    const call = reply.tool && { id: "call_1", type: "function", function: { name: reply.tool, arguments: JSON.stringify(TOOL_INPUT) } };
    if (!body.stream) {
      return json(res, 200, {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 0,
        model,
        choices: [
          { index: 0, message: { role: "assistant", content: reply.tool ? null : reply.text, ...(call ? { tool_calls: [call] } : {}) }, finish_reason: finish },
        ],
        usage,
      });
    }
    const chunk = (delta: object, finish_reason: string | null = null) =>
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
    const pieces = [chunk({ role: "assistant", content: "" })];
    if (call) pieces.push(chunk({ tool_calls: [{ index: 0, ...call }] }));
    else for (const c of chunks(model, reply.text)) pieces.push(chunk({ content: c }));
    pieces.push(chunk({}, finish));
    if (body.stream_options?.include_usage)
      pieces.push(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model, choices: [], usage })}\n\n`);
    pieces.push("data: [DONE]\n\n");
    await stream(req, res, model, "text/event-stream", pieces);
  }

  async function gemini(req: IncomingMessage, res: ServerResponse, path: string, url: URL, body: any, model: string) {
    const key = req.headers["x-goog-api-key"];
    if (refused(key))
      return json(res, 400, { error: { code: 400, message: `API key not valid: ${key}. Please pass a valid API key.`, status: "INVALID_ARGUMENT" } });
    if (path === "/v1beta/models") {
      return json(res, 200, {
        models: [
          { name: "models/gemini-2.5-flash", displayName: "Gemini 2.5 Flash", supportedGenerationMethods: ["generateContent"] },
          { name: "models/gemini-embedding-001", supportedGenerationMethods: ["embedContent"] },
        ],
      });
    }
    if (path.endsWith(":embedContent")) return json(res, 200, { embedding: { values: vectorOf(body.content.parts[0].text, body.outputDimensionality) } });
    if (path.endsWith(":batchEmbedContents"))
      return json(res, 200, { embeddings: body.requests.map((r: any) => ({ values: vectorOf(r.content.parts[0].text, r.outputDimensionality) })) });
    const texts = body.contents.filter((c: any) => c.role === "user").flatMap((c: any) => c.parts.filter((p: any) => p.text).map((p: any) => p.text));
    const tools = (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((f: any) => f.name));
    const reply = decide(lastUserText(texts), tools, model);
    const usageMetadata = { promptTokenCount: USAGE.prompt, candidatesTokenCount: USAGE.completion, totalTokenCount: USAGE.prompt + USAGE.completion };
    const candidate = (parts: object[], finishReason?: string) => ({
      candidates: [{ content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
      ...(finishReason ? { usageMetadata } : {}),
    });
    if (path.endsWith(":generateContent")) {
      return json(res, 200, candidate(reply.tool ? [{ functionCall: { name: reply.tool, args: TOOL_INPUT } }] : [{ text: reply.text }], "STOP"));
    }
    if (!path.endsWith(":streamGenerateContent") || url.searchParams.get("alt") !== "sse")
      return json(res, 404, { error: { code: 404, message: "not found", status: "NOT_FOUND" } });
    const pieces = reply.tool
      ? [candidate([{ functionCall: { name: reply.tool, args: TOOL_INPUT } }], "STOP")]
      : chunks(model, reply.text).map((c, i, all) => candidate([{ text: c }], i === all.length - 1 ? "STOP" : undefined));
    await stream(
      req,
      res,
      model,
      "text/event-stream",
      pieces.map((p) => `data: ${JSON.stringify(p)}\r\n\r\n`),
    );
  }

  async function ollama(req: IncomingMessage, res: ServerResponse, path: string, body: any, model: string) {
    const key = req.headers.authorization?.replace(/^Bearer /, "");
    if (refused(key)) return json(res, 401, { error: `unauthorized: ${key}` });
    if (path === "/api/tags") return json(res, 200, { models: [{ name: "llama3.2:latest", model: "llama3.2:latest", size: 1 }] });
    if (path === "/api/embed") {
      const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
      return json(res, 200, {
        model,
        embeddings: inputs.map((t) => vectorOf(t, body.dimensions)),
        total_duration: 1000,
        load_duration: 10,
        prompt_eval_count: inputs.length * 3,
      });
    }
    if (model === "missing") return json(res, 404, { error: `model "${model}" not found, try pulling it first` });
    const texts = body.messages.filter((m: any) => m.role === "user").map((m: any) => m.content);
    const reply = decide(
      lastUserText(texts),
      (body.tools ?? []).map((t: any) => t.function.name),
      model,
    );
    const message = {
      role: "assistant",
      content: reply.text,
      ...(reply.tool ? { tool_calls: [{ function: { name: reply.tool, arguments: TOOL_INPUT } }] } : {}),
    };
    const done = { done: true, done_reason: "stop", prompt_eval_count: USAGE.prompt, eval_count: USAGE.completion };
    if (body.stream === false) return json(res, 200, { model, created_at: new Date().toISOString(), message, ...done });
    const line = (o: object) => `${JSON.stringify({ model, created_at: new Date().toISOString(), ...o })}\n`;
    const pieces = reply.tool
      ? [line({ message, done: false })]
      : chunks(model, reply.text).map((c) => line({ message: { role: "assistant", content: c }, done: false }));
    pieces.push(line({ message: { role: "assistant", content: "" }, ...done }));
    await stream(req, res, model, "application/x-ndjson", pieces);
  }

  function voyage(req: IncomingMessage, res: ServerResponse, path: string, body: any, model: string) {
    const key = req.headers.authorization?.replace(/^Bearer /, "");
    if (refused(key)) return json(res, 401, { detail: `Provided API key is invalid: ${key}` });
    if (path === "/v1/embeddings") {
      return json(res, 200, {
        object: "list",
        model,
        data: body.input.map((t: string, index: number) => ({ object: "embedding", index, embedding: vectorOf(t, body.output_dimension) })),
        usage: { total_tokens: body.input.length * 3 },
      });
    }
    if (path === "/v1/multimodalembeddings") {
      const data = body.inputs.map((input: any, index: number) => ({ object: "embedding", index, embedding: vectorOf(JSON.stringify(input.content)) }));
      return json(res, 200, { object: "list", model, data, usage: { text_tokens: 3, image_pixels: 100, total_tokens: 5 * body.inputs.length } });
    }
    if (path === "/v1/rerank") {
      // Scores by words shared with the query, so tests can predict the order.
      const words = new Set(body.query.toLowerCase().split(/\s+/));
      const scored = body.documents.map((d: string, index: number) => ({
        index,
        relevance_score:
          d
            .toLowerCase()
            .split(/\s+/)
            .filter((w) => words.has(w)).length / 10,
      }));
      scored.sort((a: any, b: any) => b.relevance_score - a.relevance_score);
      return json(res, 200, { object: "list", model, data: scored.slice(0, body.top_k ?? scored.length), usage: { total_tokens: 9 } });
    }
    json(res, 404, { detail: "Not Found" });
  }

  outliveClientKeepAlive(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const prefixes = { anthropic: "/anthropic/v1", openai: "/openai/v1", gemini: "/gemini/v1beta", ollama: "/ollama", voyage: "/voyage/v1" };
  return {
    url,
    baseUrl: (p) => url + prefixes[p],
    requests,
    abandoned,
    written,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
