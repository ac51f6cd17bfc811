import { createRoute, z } from "@hono/zod-openapi";
import { DEFAULT_OPTIONS, TOKEN_COUNTERS, compact } from "../ai/compaction.ts";
import { InputError } from "../errors.ts";
import { USER, guarded } from "../http/access.ts";
import { json, jsonBody } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { JsonValue, errorResponses } from "../http/schemas.ts";

const Message = z
  .object({
    role: z.string().min(1).max(32),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()).openapi({ type: "object", additionalProperties: {} }))]),
  })
  .catchall(JsonValue)
  .openapi("CompactMessage");
const Options = z
  .object({
    preserve_tool_results: z.boolean().default(DEFAULT_OPTIONS.preserveToolResults),
    preserve_schema_info: z.boolean().default(DEFAULT_OPTIONS.preserveSchemaInfo),
    enable_summarization: z.boolean().default(DEFAULT_OPTIONS.enableSummarization),
    min_important_messages: z.number().int().min(0).max(1000).default(DEFAULT_OPTIONS.minImportantMessages),
    token_counter_type: z.enum(TOKEN_COUNTERS).default("generic"),
    enable_llm_summarization: z
      .boolean()
      .default(false)
      .openapi({ description: "Not available: the summary is built from the dropped messages; true is refused" }),
    enable_caching: z.boolean().optional().openapi({ description: "Accepted and ignored: compaction is cheap and stateless" }),
    cache_ttl: z.number().optional().openapi({ description: "Accepted and ignored" }),
    enable_analytics: z.boolean().optional().openapi({ description: "Accepted and ignored" }),
  })
  .openapi("CompactionOptions");
const Request = z
  .object({
    messages: z.array(Message).min(1, "messages: the array cannot be empty").max(100_000),
    max_tokens: z.number().int().min(1).max(10_000_000).default(DEFAULT_OPTIONS.maxTokens),
    recent_window: z.number().int().min(0).max(100_000).default(DEFAULT_OPTIONS.recentWindow),
    keep_anchors: z.boolean().default(DEFAULT_OPTIONS.keepAnchors),
    options: Options.optional(),
  })
  .openapi("CompactRequest");
const Result = z
  .object({
    messages: z.array(Message),
    summary: z.object({ topics: z.array(z.string()), tables: z.array(z.string()), tools: z.array(z.string()), description: z.string() }).nullable(),
    token_estimate: z.number().int(),
    compaction_info: z.object({
      original_count: z.number().int(),
      compacted_count: z.number().int(),
      dropped_count: z.number().int(),
      anchor_count: z.number().int(),
      tokens_saved: z.number().int(),
      compression_ratio: z.number(),
    }),
  })
  .openapi("CompactResult");

const route = guarded(
  USER,
  createRoute({
    method: "post",
    path: "/api/v1/chat/compact",
    tags: ["Utilities"],
    summary: "Shorten a chat history to a token budget (stateless; nothing is stored or sent to an LLM)",
    description:
      "Keeps the first message, the last `recent_window` messages and the important ones between (tool calls with their results, schema facts, errors), never splitting a tool call from its result, within `max_tokens` (estimated: characters / 4, weighted for SQL, JSON and code, plus 10 per message). What was dropped is named in one assistant message after the first.",
    request: { body: jsonBody(Request) },
    responses: { 200: json(Result, "The shortened history"), ...errorResponses(400, 401) },
  }),
);

export const chatCompactRoutes = newRouter().openapi(route, (c) => {
  const body = c.req.valid("json");
  const o = Options.parse(body.options ?? {});
  if (o.enable_llm_summarization)
    throw new InputError("options.enable_llm_summarization: not available; the summary is built from the dropped messages (leave it false)");
  const result = compact(body.messages as Parameters<typeof compact>[0], {
    maxTokens: body.max_tokens,
    recentWindow: body.recent_window,
    keepAnchors: body.keep_anchors,
    preserveToolResults: o.preserve_tool_results,
    preserveSchemaInfo: o.preserve_schema_info,
    enableSummarization: o.enable_summarization,
    minImportantMessages: o.min_important_messages,
    tokenCounter: o.token_counter_type,
  });
  return c.json(result as z.infer<typeof Result>, 200);
});
