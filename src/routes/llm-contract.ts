/**
 * The LLM proxy API's request and response schemas (llm.ts declares the routes and answers them).
 */
import { z } from "@hono/zod-openapi";
import { JsonValue } from "../http/schemas.ts";
import { MAX_EMBED_INPUTS } from "../llm/embed.ts";
import { LLM_PROVIDERS } from "../llm-config.ts";
import { MODEL_NAME } from "../llm/providers.ts";
import { MAX_RERANK_DOCUMENTS } from "../llm/rerank.ts";

export const Provider = z.object({
  name: z.enum(LLM_PROVIDERS),
  display: z.string(),
  isDefault: z.boolean(),
  capabilities: z.array(z.enum(["chat", "embed", "embed_images", "rerank"])),
});
export const ProviderName = z.enum(LLM_PROVIDERS, { error: `must be one of: ${LLM_PROVIDERS.join(", ")}` });
const ModelName = z.string().regex(MODEL_NAME, "must be 1-256 characters of letters, digits and - . _ : / (no . or .. path segments)");

/** A JSON object (tool arguments, JSON Schemas). */
const JsonObject = z.record(z.string(), z.unknown()).openapi({ type: "object", additionalProperties: {} });
const TextBlock = z.object({ type: z.literal("text"), text: z.string() });
const ToolUseBlock = z.object({ type: z.literal("tool_use"), id: z.string().min(1).max(256), name: z.string().min(1).max(128), input: JsonObject });
const ToolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1).max(256),
  content: z.union([z.string(), z.array(TextBlock)]),
  is_error: z.boolean().optional(),
});
const Message = z.object({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(z.discriminatedUnion("type", [TextBlock, ToolUseBlock, ToolResultBlock])).min(1)]),
  cache_control: JsonValue.optional().openapi({ description: "Accepted for compatibility; providers cache as they see fit" }),
});
const Tool = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "tool names are 1-64 letters, digits, _ and -"),
  description: z.string().max(10_000).optional(),
  inputSchema: JsonObject.openapi({ description: "JSON Schema of the tool's arguments" }),
});
export const ChatRequest = z
  .object({
    messages: z.array(Message).min(1, "messages: at least one message").max(2000),
    tools: z.array(Tool).max(256).default([]),
    system: z
      .string()
      .max(100_000)
      .optional()
      .openapi({ description: "Replaces pglens's assistant persona; the caller's memories and identity are still appended" }),
    provider: ProviderName.optional(),
    model: ModelName.optional(),
    debug: z.boolean().optional(),
  })
  .openapi("ChatRequest");
const Usage = z
  .object({
    provider: z.string(),
    model: z.string(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    cache_read_tokens: z.number().int(),
    cache_creation_tokens: z.number().int(),
  })
  .openapi("TokenUsage");
export const ChatReply = z
  .object({ content: z.array(z.union([TextBlock, ToolUseBlock])), stop_reason: z.string().openapi({ example: "end_turn" }), token_usage: Usage })
  .openapi("ChatReply");

export const STREAM_FORMAT = [
  'Server-sent events, in this order: `message_start` `{provider, model}`; any number of `content_delta` `{index, type: "text", text}` and',
  '`tool_use` `{index, type: "tool_use", id, name, input}` (each tool call once complete); then `message_end` `{stop_reason, token_usage}`,',
  "or `error` `{error}` when the provider fails mid-way or your credential stops holding (signed out, revoked, expired; checked about once a second).",
  "Each `data` is one line of JSON. A `: keepalive` comment is sent every 15 s. Closing the connection cancels the provider request (you are charged",
  "for the prompt and what was streamed).",
].join(" ");

export const EmbedRequest = z
  .object({
    input: z
      .union([z.string(), z.array(z.string())], { error: "input: a text or a list of texts" })
      .openapi({ description: `A text or a list of 1-${MAX_EMBED_INPUTS} texts` }),
    model: ModelName.optional(),
    provider: ProviderName.optional(),
    dimensions: z.number().int().min(1).max(65_536).optional(),
  })
  .openapi("EmbedRequest");
export const Embeddings = z.object({ model: z.string(), dimensions: z.number().int(), embeddings: z.array(z.array(z.number())) }).openapi("Embeddings");
const MultimodalInput = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string().min(1) }),
  z.object({
    type: z.literal("image"),
    data: z
      .string()
      .regex(/^[A-Za-z0-9+/=\s]+$/, "data: base64 without a data: prefix")
      .optional(),
    url: z.url({ protocol: /^https?$/, error: "url: an http(s) URL" }).optional(),
    mime_type: z.enum(["image/png", "image/jpeg", "image/webp", "image/gif"]).optional(),
  }),
]);
export const MultimodalRequest = z
  .object({
    inputs: z.array(MultimodalInput).min(1, "inputs: at least one").max(MAX_EMBED_INPUTS, `inputs: at most ${MAX_EMBED_INPUTS} per request`),
    model: ModelName.optional(),
    provider: ProviderName.optional(),
  })
  .openapi("MultimodalEmbedRequest");
export const RerankRequest = z
  .object({
    query: z.string().min(1, "query: required"),
    documents: z.array(z.string()).min(1, "documents: at least one").max(MAX_RERANK_DOCUMENTS, `documents: at most ${MAX_RERANK_DOCUMENTS}`),
    top_n: z.number().int().min(1).optional(),
    model: ModelName.optional(),
    provider: ProviderName.optional(),
  })
  .openapi("RerankRequest");
export const Reranked = z
  .object({
    method: z.string().openapi({ description: "`<provider>/<model>`, or `bm25` when no rerank provider is configured" }),
    results: z.array(z.object({ index: z.number().int(), score: z.number(), document: z.string() })),
  })
  .openapi("Reranked");

/** Who is asking, as the system prompt tells the model. */
