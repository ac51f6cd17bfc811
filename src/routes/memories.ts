import { createRoute, z } from "@hono/zod-openapi";
import { hasAdminPermission } from "../auth/rbac.ts";
import { MEMORY_SCOPES, type MemoryRow, deleteMemory, getVisibleMemory, listMemories, setPinned } from "../datastore/memories.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import { USER, authority, guarded } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { IdParam, json, jsonBody } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import type { Context } from "hono";

const tags = ["Memories"];
const base = "/api/v1/memories";

const Memory = z
  .object({
    id: z.number().int(),
    username: z.string().openapi({ description: "Who stored it" }),
    scope: z.enum(MEMORY_SCOPES),
    category: z.string(),
    content: z.string(),
    pinned: z.boolean(),
    model_name: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Memory");

const memoryJson = (m: MemoryRow) => ({
  id: m.id,
  username: m.created_by,
  scope: m.scope,
  category: m.category,
  content: m.content,
  pinned: m.pinned,
  model_name: m.model_name,
  created_at: m.created_at.toISOString(),
  updated_at: m.updated_at.toISOString(),
});

/** A memory the caller may change: its own, or a system memory with store_system_memory. Others are not found. */
async function changeable(c: Context<AppEnv>, id: number, verb: string): Promise<MemoryRow> {
  const a = await authority(c);
  const memory = await getVisibleMemory(c.get("db"), a.principal.userId, id);
  if (!memory) throw new NotFoundError("memory not found");
  if (memory.scope === "system" && !hasAdminPermission(a, "store_system_memory"))
    throw new ForbiddenError(`${verb} a system memory needs the store_system_memory permission`);
  return memory;
}

const r = {
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: base,
      tags,
      summary: "Your memories and the system's, most recently changed first (they are stored with the store_memory tool)",
      request: { query: z.object({ category: z.string().max(64).optional(), limit: z.coerce.number().int().min(1).max(100).default(100) }) },
      responses: { 200: json(z.object({ memories: z.array(Memory) }), "Memories"), ...errorResponses(400, 401) },
    }),
  ),
  pin: guarded(
    USER,
    createRoute({
      method: "patch",
      path: `${base}/{id}`,
      tags,
      summary: "Pin or unpin a memory (pinned ones join every chat's system prompt)",
      request: { params: IdParam, body: jsonBody(z.object({ pinned: z.boolean() })) },
      responses: { 200: json(z.object({ id: z.number().int(), pinned: z.boolean() }), "Changed"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  remove: guarded(
    USER,
    createRoute({
      method: "delete",
      path: `${base}/{id}`,
      tags,
      summary: "Forget a memory",
      request: { params: IdParam },
      responses: { 200: json(z.object({ status: z.literal("deleted") }), "Deleted"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

export const memoryRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const q = c.req.valid("query");
    const rows = await listMemories(c.get("db"), c.get("principal")!.userId, q);
    return c.json({ memories: rows.map(memoryJson) }, 200);
  })
  .openapi(r.pin, async (c) => {
    const memory = await changeable(c, c.req.valid("param").id, "pinning");
    const { pinned } = c.req.valid("json");
    await setPinned(c.get("db"), memory.id, pinned);
    return c.json({ id: memory.id, pinned }, 200);
  })
  .openapi(r.remove, async (c) => {
    const memory = await changeable(c, c.req.valid("param").id, "deleting");
    await deleteMemory(c.get("db"), memory.id);
    return c.json({ status: "deleted" as const }, 200);
  });
