import { createRoute, z } from "@hono/zod-openapi";
import { assertMayPlace, visibleEstate } from "../http/blackout-access.ts";
import { BLACKOUT_SCOPES, checkScope } from "../blackouts/scope.ts";
import { type BlackoutRow, createBlackout, deleteBlackout, getBlackout, listBlackouts, stopBlackout, updateBlackout } from "../datastore/blackouts.ts";
import { InputError, NotFoundError } from "../errors.ts";
import { USER, admin, authority, guarded } from "../http/access.ts";
import { Id, IdParam, PathId, json, jsonBody, noContent, queryFlag } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { parseRfc3339 } from "../metrics/window.ts";

const tags = ["Blackouts"];
const MANAGE = admin("manage_blackouts");

export const ScopeFields = {
  scope: z.enum(BLACKOUT_SCOPES),
  group_id: Id.nullable().optional(),
  cluster_id: Id.nullable().optional(),
  connection_id: Id.nullable().optional(),
  database_name: z.string().min(1).max(63).nullable().optional().openapi({ description: "Server scope only: silence one database of the server" }),
};

export const ScopeOut = {
  scope: z.enum(BLACKOUT_SCOPES),
  group_id: z.number().int().nullable(),
  cluster_id: z.number().int().nullable(),
  connection_id: z.number().int().nullable(),
  database_name: z.string().nullable(),
};

const Blackout = z
  .object({
    id: z.number().int(),
    ...ScopeOut,
    reason: z.string(),
    start_time: z.string(),
    end_time: z.string(),
    created_by: z.string().openapi({ description: "Who created it; `scheduler` for windows opened by a schedule" }),
    created_at: z.string(),
    schedule_id: z.number().int().nullable(),
    is_active: z.boolean().openapi({ description: "start_time <= now <= end_time, computed on every read" }),
  })
  .openapi("Blackout");

const time = (description: string) => z.string().openapi({ description, example: "2026-11-24T02:00:00Z" });
const NewBlackout = z
  .object({ ...ScopeFields, reason: z.string().max(2000).default(""), start_time: time("RFC 3339"), end_time: time("RFC 3339, after start_time") })
  .strict()
  .openapi("NewBlackout");
const BlackoutChanges = z
  .object({ reason: z.string().max(2000), end_time: time("RFC 3339, after the start") })
  .partial()
  .strict()
  .openapi("BlackoutChanges");

const ListQuery = z.object({
  scope: z.enum(BLACKOUT_SCOPES).optional(),
  group_id: PathId.optional(),
  cluster_id: PathId.optional(),
  connection_id: PathId.optional(),
  active: queryFlag("true: only windows active now; false: only the others"),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
});

const r = {
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/blackouts",
      tags,
      summary: "Maintenance windows the caller can see, latest start first",
      request: { query: ListQuery },
      responses: { 200: json(z.object({ blackouts: z.array(Blackout), total_count: z.number().int() }), "Windows"), ...errorResponses(400, 401) },
    }),
  ),
  create: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/blackouts",
      tags,
      summary: "Plan a maintenance window (alerts are silenced inside it)",
      request: { body: jsonBody(NewBlackout) },
      responses: { 201: json(Blackout, "Created"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  get: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/blackouts/{id}",
      tags,
      summary: "One window",
      request: { params: IdParam },
      responses: { 200: json(Blackout, "Window"), ...errorResponses(400, 401, 404) },
    }),
  ),
  update: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/blackouts/{id}",
      tags,
      summary: "Change a window's reason or end",
      request: { params: IdParam, body: jsonBody(BlackoutChanges) },
      responses: { 200: json(Blackout, "Updated"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  remove: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/blackouts/{id}",
      tags,
      summary: "Delete a window",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  stop: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/blackouts/{id}/stop",
      tags,
      summary: "End an active window now",
      request: { params: IdParam },
      responses: { 200: json(Blackout, "Ended"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

export function blackoutJson(b: BlackoutRow, now = Date.now()) {
  return {
    id: b.id,
    scope: b.scope,
    group_id: b.group_id,
    cluster_id: b.cluster_id,
    connection_id: b.connection_id,
    database_name: b.database_name,
    reason: b.reason,
    start_time: b.start_time.toISOString(),
    end_time: b.end_time.toISOString(),
    created_by: b.created_by,
    created_at: b.created_at.toISOString(),
    schedule_id: b.schedule_id,
    is_active: b.start_time.getTime() <= now && now <= b.end_time.getTime(),
  };
}

const endAfterStart = (start: Date, end: Date) => {
  if (end.getTime() <= start.getTime()) throw new InputError("end_time must be after start_time");
};

export const blackoutRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const q = c.req.valid("query");
    const { blackouts, total } = await listBlackouts(c.get("db"), q, await visibleEstate(c));
    return c.json({ blackouts: blackouts.map((b) => blackoutJson(b)), total_count: total }, 200);
  })
  .openapi(r.create, async (c) => {
    const body = c.req.valid("json");
    const target = checkScope(body);
    const start = new Date(parseRfc3339(body.start_time, "start_time"));
    const end = new Date(parseRfc3339(body.end_time, "end_time"));
    endAfterStart(start, end);
    await assertMayPlace(c, target);
    const row = await createBlackout(c.get("db"), {
      ...target,
      reason: body.reason,
      start_time: start,
      end_time: end,
      created_by: (await authority(c)).principal.username,
    });
    return c.json(blackoutJson(row), 201);
  })
  .openapi(r.get, async (c) => c.json(blackoutJson(await getBlackout(c.get("db"), c.req.valid("param").id, await visibleEstate(c))), 200))
  .openapi(r.update, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const current = await getBlackout(c.get("db"), id, await visibleEstate(c));
    await assertMayPlace(c, current);
    const end = body.end_time === undefined ? undefined : new Date(parseRfc3339(body.end_time, "end_time"));
    if (end) endAfterStart(current.start_time, end);
    return c.json(blackoutJson(await updateBlackout(c.get("db"), id, { reason: body.reason, end_time: end })), 200);
  })
  .openapi(r.remove, async (c) => {
    const { id } = c.req.valid("param");
    await assertMayPlace(c, await getBlackout(c.get("db"), id, await visibleEstate(c)));
    await deleteBlackout(c.get("db"), id);
    return c.body(null, 204);
  })
  .openapi(r.stop, async (c) => {
    const { id } = c.req.valid("param");
    await assertMayPlace(c, await getBlackout(c.get("db"), id, await visibleEstate(c)));
    const stopped = await stopBlackout(c.get("db"), id);
    if (!stopped) throw new NotFoundError(`blackout ${id} is not active`);
    // It ended at this instant; read back within the same millisecond it would still count as active.
    return c.json(blackoutJson(stopped, stopped.end_time.getTime() + 1), 200);
  });
