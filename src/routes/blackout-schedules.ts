import { createRoute, z } from "@hono/zod-openapi";
import { assertMayPlace, visibleEstate } from "../http/blackout-access.ts";
import { nextStarts, parseSchedule } from "../blackouts/cron.ts";
import { BLACKOUT_SCOPES, checkScope } from "../blackouts/scope.ts";
import { type ScheduleRow, createSchedule, deleteSchedule, getSchedule, listSchedules, replaceSchedule } from "../datastore/blackouts.ts";
import { USER, admin, authority, guarded } from "../http/access.ts";
import { IdParam, PathId, json, jsonBody, noContent, queryFlag } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { ScopeFields, ScopeOut } from "./blackouts.ts";

const tags = ["Blackouts"];
const MANAGE = admin("manage_blackouts");

const Schedule = z
  .object({
    id: z.number().int(),
    ...ScopeOut,
    name: z.string(),
    cron_expression: z.string(),
    duration_minutes: z.number().int(),
    timezone: z.string(),
    reason: z.string(),
    enabled: z.boolean(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    next_runs: z.array(z.string()).openapi({ description: "The next 3 window starts (RFC 3339, UTC)" }),
  })
  .openapi("BlackoutSchedule");

const ScheduleBody = z
  .object({
    ...ScopeFields,
    name: z.string().trim().min(1).max(200),
    cron_expression: z
      .string()
      .min(1)
      .max(200)
      .openapi({ description: "5 fields: minute hour day-of-month month day-of-week (ranges, lists, steps)", example: "0 2 * * 0" }),
    duration_minutes: z.number().int().min(1).max(525_600),
    timezone: z.string().min(1).max(100).default("UTC").openapi({ description: "IANA timezone the expression is read in", example: "Europe/Berlin" }),
    reason: z.string().max(2000).default(""),
    enabled: z.boolean().default(true),
  })
  .strict()
  .openapi("BlackoutScheduleFields");

const r = {
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/blackout-schedules",
      tags,
      summary: "Recurring maintenance windows the caller can see",
      request: {
        query: z.object({
          scope: z.enum(BLACKOUT_SCOPES).optional(),
          group_id: PathId.optional(),
          cluster_id: PathId.optional(),
          connection_id: PathId.optional(),
          enabled: queryFlag("true: only enabled schedules; false: only disabled ones"),
          limit: z.coerce.number().int().min(1).max(1000).default(100),
          offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
        }),
      },
      responses: { 200: json(z.object({ schedules: z.array(Schedule), total_count: z.number().int() }), "Schedules"), ...errorResponses(400, 401) },
    }),
  ),
  create: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: "/api/v1/blackout-schedules",
      tags,
      summary: "Create a recurring window",
      request: { body: jsonBody(ScheduleBody) },
      responses: { 201: json(Schedule, "Created"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  get: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/blackout-schedules/{id}",
      tags,
      summary: "One schedule",
      request: { params: IdParam },
      responses: { 200: json(Schedule, "Schedule"), ...errorResponses(400, 401, 404) },
    }),
  ),
  replace: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: "/api/v1/blackout-schedules/{id}",
      tags,
      summary: "Replace a schedule (all fields, same checks)",
      request: { params: IdParam, body: jsonBody(ScheduleBody) },
      responses: { 200: json(Schedule, "Replaced"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  remove: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: "/api/v1/blackout-schedules/{id}",
      tags,
      summary: "Delete a schedule (windows it opened stay)",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

function scheduleJson(s: ScheduleRow, now = new Date()) {
  return {
    id: s.id,
    scope: s.scope,
    group_id: s.group_id,
    cluster_id: s.cluster_id,
    connection_id: s.connection_id,
    database_name: s.database_name,
    name: s.name,
    cron_expression: s.cron_expression,
    duration_minutes: s.duration_minutes,
    timezone: s.timezone,
    reason: s.reason,
    enabled: s.enabled,
    created_by: s.created_by,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
    next_runs: nextStarts(parseSchedule(s.cron_expression, s.timezone), 3, now).map((d) => d.toISOString()),
  };
}

/** The body checked as a whole: scope, cron expression and timezone, before anything is written. */
function checked(body: z.infer<typeof ScheduleBody>) {
  const target = checkScope(body);
  parseSchedule(body.cron_expression, body.timezone);
  return {
    ...target,
    name: body.name,
    cron_expression: body.cron_expression.trim(),
    duration_minutes: body.duration_minutes,
    timezone: body.timezone,
    reason: body.reason,
    enabled: body.enabled,
  };
}

export const blackoutScheduleRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const { schedules, total } = await listSchedules(c.get("db"), c.req.valid("query"), await visibleEstate(c));
    return c.json({ schedules: schedules.map((s) => scheduleJson(s)), total_count: total }, 200);
  })
  .openapi(r.create, async (c) => {
    const fields = checked(c.req.valid("json"));
    await assertMayPlace(c, fields);
    return c.json(scheduleJson(await createSchedule(c.get("db"), { ...fields, created_by: (await authority(c)).principal.username })), 201);
  })
  .openapi(r.get, async (c) => c.json(scheduleJson(await getSchedule(c.get("db"), c.req.valid("param").id, await visibleEstate(c))), 200))
  .openapi(r.replace, async (c) => {
    const { id } = c.req.valid("param");
    const fields = checked(c.req.valid("json"));
    await assertMayPlace(c, await getSchedule(c.get("db"), id, await visibleEstate(c)));
    await assertMayPlace(c, fields);
    return c.json(scheduleJson(await replaceSchedule(c.get("db"), id, fields)), 200);
  })
  .openapi(r.remove, async (c) => {
    const { id } = c.req.valid("param");
    await assertMayPlace(c, await getSchedule(c.get("db"), id, await visibleEstate(c)));
    await deleteSchedule(c.get("db"), id);
    return c.body(null, 204);
  });
