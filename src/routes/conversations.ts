import { createRoute, z } from "@hono/zod-openapi";
import {
  type ConversationRow,
  createConversation,
  deleteAllConversations,
  deleteConversation,
  getConversation,
  listConversations,
  renameConversation,
  replaceConversation,
} from "../datastore/conversations.ts";
import { InputError, NotFoundError } from "../errors.ts";
import { USER, guarded } from "../http/access.ts";
import { json, jsonBody, queryFlag } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { JsonValue, errorResponses } from "../http/schemas.ts";

const tags = ["Conversations"];
const base = "/api/v1/conversations";
const NOT_FOUND = "conversation not found";
const MAX_MESSAGES = 10_000;

const IdParam = z.object({
  id: z
    .string()
    .regex(/^conv_\d{1,25}_[0-9a-f]{16}$/, "not a conversation id")
    .openapi({ param: { name: "id", in: "path" }, example: "conv_1763900000000000000_0123456789abcdef" }),
});
const Message = z
  .object({
    role: z.enum(["user", "assistant", "system"]),
    content: z.union([z.string(), z.array(JsonValue)]).openapi({ description: "Text, or content blocks as /llm/chat takes them" }),
  })
  .catchall(JsonValue)
  .openapi("ConversationMessage", { description: "A message; other fields (timestamp, provider, model, activity, isError) are kept as sent" });
const Fields = z
  .object({
    provider: z.string().max(64).optional(),
    model: z.string().max(256).optional(),
    connection: z.string().max(256).optional().openapi({ description: "A free-text label of the server the conversation was about" }),
    messages: z.array(Message).min(1, "messages: at least one message").max(MAX_MESSAGES, `messages: at most ${MAX_MESSAGES}`),
  })
  .openapi("ConversationFields");
const Conversation = z
  .object({
    id: z.string(),
    title: z.string(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    connection: z.string().nullable(),
    messages: z.array(Message),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Conversation");
const Summary = z
  .object({ id: z.string(), title: z.string(), connection: z.string().nullable(), created_at: z.string(), updated_at: z.string(), preview: z.string() })
  .openapi("ConversationSummary");
const Success = z.object({ success: z.literal(true) });

const conversationJson = (r: ConversationRow) => ({
  id: r.id,
  title: r.title,
  provider: r.provider,
  model: r.model,
  connection: r.connection,
  messages: r.messages as z.infer<typeof Message>[],
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

const found = <T>(value: T | undefined | false): T => {
  if (!value) throw new NotFoundError(NOT_FOUND);
  return value;
};

const route = <R extends Parameters<typeof createRoute>[0]>(r: R) => guarded(USER, createRoute({ tags, ...r }));

const r = {
  list: route({
    method: "get",
    path: base,
    summary: "The caller's conversations, most recently updated first",
    request: {
      query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(50), offset: z.coerce.number().int().min(0).max(10_000_000).default(0) }),
    },
    responses: { 200: json(z.object({ conversations: z.array(Summary) }), "Conversations"), ...errorResponses(400, 401) },
  }),
  create: route({
    method: "post",
    path: base,
    summary: "Save a conversation (its title comes from the first user message)",
    request: { body: jsonBody(Fields) },
    responses: { 201: json(Conversation, "Saved"), ...errorResponses(400, 401) },
  }),
  removeAll: route({
    method: "delete",
    path: base,
    summary: "Delete all of the caller's conversations (needs ?all=true)",
    request: { query: z.object({ all: queryFlag("true: delete every conversation of yours (required, as a guard)") }) },
    responses: { 200: json(z.object({ success: z.literal(true), deleted: z.number().int() }), "Deleted"), ...errorResponses(400, 401) },
  }),
  get: route({
    method: "get",
    path: `${base}/{id}`,
    summary: "One of the caller's conversations",
    request: { params: IdParam },
    responses: { 200: json(Conversation, "Conversation"), ...errorResponses(400, 401, 404) },
  }),
  replace: route({
    method: "put",
    path: `${base}/{id}`,
    summary: "Replace a conversation's messages, provider, model and label",
    request: { params: IdParam, body: jsonBody(Fields) },
    responses: { 200: json(Conversation, "Replaced"), ...errorResponses(400, 401, 404) },
  }),
  rename: route({
    method: "patch",
    path: `${base}/{id}`,
    summary: "Rename a conversation",
    request: { params: IdParam, body: jsonBody(z.object({ title: z.string().trim().min(1, "title: required").max(200) })) },
    responses: { 200: json(Success, "Renamed"), ...errorResponses(400, 401, 404) },
  }),
  remove: route({
    method: "delete",
    path: `${base}/{id}`,
    summary: "Delete a conversation",
    request: { params: IdParam },
    responses: { 200: json(Success, "Deleted"), ...errorResponses(400, 401, 404) },
  }),
};

/** Every handler acts for the caller's own user (an API token's owner): another user's conversation does not exist here. */
export const conversationRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const { limit, offset } = c.req.valid("query");
    const rows = await listConversations(c.get("db"), c.get("principal")!.userId, limit, offset);
    return c.json({ conversations: rows.map((s) => ({ ...s, created_at: s.created_at.toISOString(), updated_at: s.updated_at.toISOString() })) }, 200);
  })
  .openapi(r.create, async (c) => c.json(conversationJson(await createConversation(c.get("db"), c.get("principal")!.userId, c.req.valid("json"))), 201))
  .openapi(r.removeAll, async (c) => {
    if (!c.req.valid("query").all) throw new InputError("use ?all=true to delete all of your conversations");
    return c.json({ success: true as const, deleted: await deleteAllConversations(c.get("db"), c.get("principal")!.userId) }, 200);
  })
  .openapi(r.get, async (c) => c.json(conversationJson(found(await getConversation(c.get("db"), c.get("principal")!.userId, c.req.valid("param").id))), 200))
  .openapi(r.replace, async (c) =>
    c.json(conversationJson(found(await replaceConversation(c.get("db"), c.get("principal")!.userId, c.req.valid("param").id, c.req.valid("json")))), 200),
  )
  .openapi(r.rename, async (c) => {
    found(await renameConversation(c.get("db"), c.get("principal")!.userId, c.req.valid("param").id, c.req.valid("json").title));
    return c.json({ success: true as const }, 200);
  })
  .openapi(r.remove, async (c) => {
    found(await deleteConversation(c.get("db"), c.get("principal")!.userId, c.req.valid("param").id));
    return c.json({ success: true as const }, 200);
  });
