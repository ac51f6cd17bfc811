import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { visibleEstate } from "../http/blackout-access.ts";
import type { Visible } from "../datastore/blackouts.ts";
import { listConnections } from "../datastore/connections.ts";
import { assertConnectionsPermitted } from "../auth/connection-access.ts";
import { USER, authority, guarded } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { json, queryIds } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { JsonValue, errorResponses } from "../http/schemas.ts";
import { customWindow, parseRfc3339 } from "../metrics/window.ts";
import { EVENT_TYPES, type TimelineEvent, parseEventTypes, timelineEvents } from "../timeline/events.ts";
import { parseConnectionIds } from "./metrics.ts";
import { readDb } from "../http/read-db.ts";

const Event = z
  .object({
    id: z.string().openapi({ description: "Stable across calls: de-duplicate on it" }),
    event_type: z.enum(EVENT_TYPES),
    connection_id: z.number().int().openapi({ description: "0 for a blackout wider than one server" }),
    server_name: z.string(),
    occurred_at: z.string(),
    severity: z.enum(["info", "warning", "critical"]),
    title: z.string(),
    summary: z.string(),
    details: z.record(z.string(), JsonValue),
  })
  .openapi("TimelineEvent");

const route = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/timeline/events",
    tags: ["Timeline"],
    summary: "What happened on the servers the caller can see: configuration, hba and ident changes, restarts, extensions, alerts, blackouts",
    request: {
      query: z.object({
        start_time: z.string({ error: "required: RFC 3339 start of the window" }).openapi({ example: "2026-11-22T00:00:00Z" }),
        end_time: z.string({ error: "required: RFC 3339 end of the window (a future end is clamped to now)" }).openapi({ example: "2026-11-23T00:00:00Z" }),
        connection_id: queryIds("Connection id; repeat the parameter or separate ids with commas for several").optional(),
        connection_ids: queryIds("Alternative spelling of connection_id; default every connection the caller can see").optional(),
        event_types: z
          .string()
          .optional()
          .openapi({ description: `Comma-separated, of: ${EVENT_TYPES.join(", ")}; default all` }),
        limit: z.coerce.number().int().min(1).max(1000).default(500),
      }),
    },
    responses: {
      200: json(z.object({ events: z.array(Event), total_count: z.number().int() }), "Events, newest first"),
      ...errorResponses(400, 401, 403, 404),
    },
  }),
);

/** The connections asked for (each must be readable), else all the caller can see, with their names. */
async function timelineConnections(c: Context<AppEnv>, visible: Visible, named: string[]): Promise<Map<number, string>> {
  let ids = visible.connections;
  if (named.length) {
    ids = parseConnectionIds(named);
    await assertConnectionsPermitted(c.get("db"), ids, await authority(c));
  }
  return new Map((await listConnections(c.get("db"))).filter((r) => ids.includes(r.id)).map((r) => [r.id, r.name]));
}

export const timelineRoutes = newRouter().openapi(route, async (c) => {
  const q = c.req.valid("query");
  const window = customWindow(parseRfc3339(q.start_time, "start_time"), parseRfc3339(q.end_time, "end_time"), Date.now(), {
    start: "start_time",
    end: "end_time",
  });
  const types = parseEventTypes(q.event_types);
  const visible = await visibleEstate(c);
  const names = await timelineConnections(c, visible, [q.connection_id ?? [], q.connection_ids ?? []].flat());
  const events: TimelineEvent[] = await timelineEvents(readDb(c), {
    connectionIds: [...names.keys()],
    names,
    visible,
    from: new Date(window.start),
    to: new Date(window.end),
    types,
  });
  // details are built from JSON-ready values (names, settings, numbers), as the schema says.
  return c.json({ events: events.slice(0, q.limit) as Array<z.infer<typeof Event>>, total_count: events.length }, 200);
});
