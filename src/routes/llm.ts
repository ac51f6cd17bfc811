import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { getUser } from "../datastore/users.ts";
import { InputError } from "../errors.ts";
import { PUBLIC, USER, authority, guarded } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { json, jsonBody } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { type ChatTurn, chat, chatStream } from "../llm/chat.ts";
import { MAX_EMBED_INPUTS, embedMultimodal, embedTexts } from "../llm/embed.ts";
import { providerHealth } from "../llm/health.ts";
import { LLM_PROVIDERS } from "../llm-config.ts";
import { listModels } from "../llm/models.ts";
import { PROVIDER_INFO, choose, configuredProviders, defaultModel, defaultProvider } from "../llm/providers.ts";
import { rerankLocally, rerankWithProvider } from "../llm/rerank.ts";
import { MAX_PINNED_MEMORIES, buildSystemPrompt } from "../llm/system-prompt.ts";
import { pinnedMemories } from "../datastore/memories.ts";
import { charged, estimateTokens, reserve } from "../llm/usage.ts";
import { CREDENTIAL_GONE, credentialCheck } from "../http/credential-check.ts";
import { payer } from "../http/payer.ts";
import {
  ChatReply,
  ChatRequest,
  EmbedRequest,
  Embeddings,
  MultimodalRequest,
  Provider,
  ProviderName,
  RerankRequest,
  Reranked,
  STREAM_FORMAT,
} from "./llm-contract.ts";

const tags = ["LLM"];
const base = "/api/v1/llm";
/** A comment line this often keeps proxies from closing a stream while the model thinks. */
export const KEEPALIVE_MS = 15_000;

async function currentUser(c: Context<AppEnv>) {
  const a = await authority(c);
  const user = await getUser(c.get("db"), a.principal.userId);
  return {
    username: user.username,
    displayName: user.display_name,
    notes: user.annotation,
    isSuperuser: user.is_superuser,
    groups: a.groups,
    adminPermissions: a.principal.isSuperuser ? [] : a.grants.admin_permissions,
  };
}

/** Reserves the caller's tokens for one call (429 when the day's budget is spent). */
const reserveFor = (c: Context<AppEnv>, endpoint: string, estimate: number) => reserve(payer(c), endpoint, estimate);

async function chatTurn(c: Context<AppEnv>, body: z.infer<typeof ChatRequest>): Promise<ChatTurn> {
  const memories = await pinnedMemories(c.get("db"), c.get("principal")!.userId, MAX_PINNED_MEMORIES);
  return { messages: body.messages, tools: body.tools, system: buildSystemPrompt(body.system, await currentUser(c), memories) };
}

export const llmRoutes = newRouter()
  .openapi(
    guarded(
      PUBLIC,
      createRoute({
        method: "get",
        path: `${base}/providers`,
        tags,
        summary: "Configured LLM providers and the default model (no authentication)",
        responses: { 200: json(z.object({ providers: z.array(Provider), defaultModel: z.string().nullable() }), "Providers with usable configuration") },
      }),
    ),
    (c) => {
      const llm = c.get("config").llm;
      const chatDefault = defaultProvider(llm, "chat");
      const providers = configuredProviders(llm).map((name) => ({
        name,
        display: PROVIDER_INFO[name].display,
        isDefault: name === chatDefault,
        capabilities: PROVIDER_INFO[name].capabilities,
      }));
      return c.json({ providers, defaultModel: chatDefault ? (defaultModel(llm, chatDefault, "chat") ?? null) : null }, 200);
    },
  )
  .openapi(
    guarded(
      PUBLIC,
      createRoute({
        method: "get",
        path: `${base}/models`,
        tags,
        summary: "The provider's models, asked live (kept 30 s; no authentication)",
        request: { query: z.object({ provider: ProviderName.optional().openapi({ description: "Default: the default chat provider" }) }) },
        responses: {
          200: json(
            z.object({ provider: z.enum(LLM_PROVIDERS), models: z.array(z.object({ name: z.string(), description: z.string().optional() })) }),
            "Models",
          ),
          ...errorResponses(400, 502, 504),
        },
      }),
    ),
    async (c) => {
      const llm = c.get("config").llm;
      const requested = c.req.valid("query").provider;
      const name = requested ?? defaultProvider(llm, "chat") ?? defaultProvider(llm, "embed");
      if (!name) throw new InputError("no LLM provider is configured: set llm.providers.<name>.api_key (or PGLENS_LLM_<NAME>_API_KEY)");
      const { provider, settings } = choose(llm, PROVIDER_INFO[name].capabilities[0], name);
      const models = await c.get("llmAnswers").models.get(provider, () => listModels(llm, provider, settings, AbortSignal.timeout(llm.timeout_seconds * 1000)));
      return c.json({ provider, models }, 200);
    },
  )
  .openapi(
    guarded(
      PUBLIC,
      createRoute({
        method: "get",
        path: `${base}/health`,
        tags,
        summary: "Each provider's health from a cheap live call (kept 30 s; no authentication)",
        responses: {
          200: json(
            z.object({
              providers: z.array(
                z.object({
                  name: z.enum(LLM_PROVIDERS),
                  status: z.enum(["ok", "error", "unconfigured"]),
                  latency_ms: z.number().int().optional(),
                  error: z.string().optional(),
                }),
              ),
              checked_at: z.string(),
            }),
            "Per provider: ok, error (with the provider's status) or unconfigured",
          ),
        },
      }),
    ),
    async (c) => c.json(await c.get("llmAnswers").health.get("all", () => providerHealth(c.get("config").llm)), 200),
  )
  .openapi(
    guarded(
      USER,
      createRoute({
        method: "post",
        path: `${base}/chat`,
        tags,
        summary: "One chat turn: the model's text and tool calls (the client runs the tools and sends their results back)",
        request: { body: jsonBody(ChatRequest) },
        responses: { 200: json(ChatReply, "The model's reply"), ...errorResponses(400, 401, 429, 502, 504) },
      }),
    ),
    async (c) => {
      const body = c.req.valid("json");
      const llm = c.get("config").llm;
      const choice = choose(llm, "chat", body.provider, body.model);
      const turn = await chatTurn(c, body);
      const reservation = await reserveFor(c, "chat", estimateTokens(JSON.stringify(turn)) + llm.max_tokens);
      const reply = await charged(
        reservation,
        () => chat(llm, choice, turn, c.req.raw.signal),
        (r) => r.token_usage,
      );
      return c.json(reply, 200);
    },
  )
  .openapi(
    guarded(
      USER,
      createRoute({
        method: "post",
        path: `${base}/chat/stream`,
        tags,
        summary: "One chat turn streamed as server-sent events",
        description: STREAM_FORMAT,
        request: { body: jsonBody(ChatRequest) },
        responses: {
          200: {
            description: STREAM_FORMAT,
            content: {
              "text/event-stream": { schema: z.string().openapi({ example: 'event: content_delta\ndata: {"index":0,"type":"text","text":"Hello"}\n\n' }) },
            },
          },
          ...errorResponses(400, 401, 429),
        },
      }),
    ),
    async (c) => {
      const body = c.req.valid("json");
      const llm = c.get("config").llm;
      const choice = choose(llm, "chat", body.provider, body.model);
      const turn = await chatTurn(c, body);
      const prompt = estimateTokens(JSON.stringify(turn));
      const reservation = await reserveFor(c, "chat/stream", prompt + llm.max_tokens);
      return streamSSE(c, async (stream) => {
        const upstream = new AbortController();
        stream.onAbort(() => upstream.abort());
        const keepalive = setInterval(() => void stream.write(": keepalive\n\n").catch(() => {}), KEEPALIVE_MS);
        let streamed = "";
        const stillAllowed = credentialCheck(c);
        try {
          for await (const e of chatStream(llm, choice, turn, upstream.signal)) {
            if (!(await stillAllowed())) {
              upstream.abort();
              await stream.writeSSE({ event: "error", data: JSON.stringify({ error: CREDENTIAL_GONE }) });
              break;
            }
            // Charged before it is written: a client that leaves at the last moment still pays.
            if (e.event === "message_end") await reservation.settle(e.data.token_usage);
            if (e.event === "content_delta") streamed += e.data.text;
            if (e.event === "tool_use") streamed += JSON.stringify(e.data);
            await stream.writeSSE({ event: e.event, data: JSON.stringify(e.data) });
          }
        } finally {
          clearInterval(keepalive);
          // No usage report (the client left, or the provider failed mid-way): the prompt and what was streamed.
          await reservation.settle({ provider: choice.provider, model: choice.model, prompt_tokens: prompt, completion_tokens: estimateTokens(streamed) });
        }
      });
    },
  )
  .openapi(
    guarded(
      USER,
      createRoute({
        method: "post",
        path: `${base}/embed`,
        tags,
        summary: "Embeddings of one text or many",
        request: { body: jsonBody(EmbedRequest) },
        responses: { 200: json(Embeddings, "One embedding per input, in order"), ...errorResponses(400, 401, 429, 502, 504) },
      }),
    ),
    async (c) => {
      const body = c.req.valid("json");
      const llm = c.get("config").llm;
      const choice = choose(llm, "embed", body.provider, body.model);
      const inputs = typeof body.input === "string" ? [body.input] : body.input;
      if (inputs.length === 0 || inputs.length > MAX_EMBED_INPUTS)
        throw new InputError(`input: 1 to ${MAX_EMBED_INPUTS} texts per request (got ${inputs.length})`);
      const reservation = await reserveFor(c, "embed", estimateTokens(inputs.join(" ")));
      const result = await charged(
        reservation,
        () => embedTexts(llm, choice, inputs, body.dimensions, c.req.raw.signal),
        (r) => ({ provider: choice.provider, model: choice.model, prompt_tokens: r.tokens, completion_tokens: 0 }),
      );
      return c.json({ model: result.model, dimensions: result.dimensions, embeddings: result.embeddings }, 200);
    },
  )
  .openapi(
    guarded(
      USER,
      createRoute({
        method: "post",
        path: `${base}/embed/multimodal`,
        tags,
        summary: "Embeddings of texts and images in one vector space (a provider that embeds images: Voyage)",
        request: { body: jsonBody(MultimodalRequest) },
        responses: { 200: json(Embeddings, "One embedding per input, in order"), ...errorResponses(400, 401, 429, 502, 504) },
      }),
    ),
    async (c) => {
      const body = c.req.valid("json");
      body.inputs.forEach((input, i) => {
        if (input.type !== "image") return;
        if (Boolean(input.data) === Boolean(input.url)) throw new InputError(`inputs[${i}]: an image needs exactly one of data (base64) or url`);
        if (input.data && !input.mime_type) throw new InputError(`inputs[${i}]: mime_type is required with data`);
      });
      const llm = c.get("config").llm;
      const choice = choose(llm, "embed_images", body.provider, body.model);
      const reservation = await reserveFor(c, "embed/multimodal", estimateTokens(JSON.stringify(body.inputs)));
      const result = await charged(
        reservation,
        () => embedMultimodal(llm, choice, body.inputs, c.req.raw.signal),
        (r) => ({ provider: choice.provider, model: choice.model, prompt_tokens: r.tokens, completion_tokens: 0 }),
      );
      return c.json({ model: result.model, dimensions: result.dimensions, embeddings: result.embeddings }, 200);
    },
  )
  .openapi(
    guarded(
      USER,
      createRoute({
        method: "post",
        path: `${base}/rerank`,
        tags,
        summary: "Documents ordered by relevance to a query (a rerank provider when configured, else local BM25)",
        request: { body: jsonBody(RerankRequest) },
        responses: { 200: json(Reranked, "Most relevant first"), ...errorResponses(400, 401, 429, 502, 504) },
      }),
    ),
    async (c) => {
      const body = c.req.valid("json");
      const llm = c.get("config").llm;
      const topN = body.top_n && Math.min(body.top_n, body.documents.length);
      if (!body.provider && !defaultProvider(llm, "rerank")) return c.json(rerankLocally(body.query, body.documents, topN), 200);
      const choice = choose(llm, "rerank", body.provider, body.model);
      const reservation = await reserveFor(c, "rerank", estimateTokens(body.query + body.documents.join(" ")));
      // Rerank providers report no token counts: the estimate is what it costs.
      const usage = {
        provider: choice.provider,
        model: choice.model,
        prompt_tokens: estimateTokens(body.query + body.documents.join(" ")),
        completion_tokens: 0,
      };
      const ranked = await charged(
        reservation,
        () => rerankWithProvider(llm, choice, body.query, body.documents, topN, c.req.raw.signal),
        () => usage,
      );
      return c.json(ranked, 200);
    },
  );
