import { createRoute, z } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import type { Overview } from "../ai/overview.ts";
import { SCOPE_TYPES, overviewFor } from "../ai/overview-scope.ts";
import type { Authority } from "../auth/rbac.ts";
import { InputError } from "../errors.ts";
import { USER, authority, guarded } from "../http/access.ts";
import { CREDENTIAL_GONE, credentialCheck } from "../http/credential-check.ts";
import { json, queryFlag, queryIds } from "../http/params.ts";
import { payer } from "../http/payer.ts";
import { newRouter } from "../http/router.ts";
import { JsonValue, errorResponses } from "../http/schemas.ts";

const Query = z.object({
  connection_ids: queryIds("Connection ids to summarize (those you can see); repeat the parameter or separate ids with commas").optional(),
  scope_type: z.enum(SCOPE_TYPES, { error: "scope_type must be server, cluster or group" }).optional(),
  scope_id: z.coerce.number({ error: "scope_id must be a positive integer" }).int().positive("scope_id must be a positive integer").optional(),
  refresh: queryFlag(
    "true: write a new summary even if nothing significant changed, charged to your daily LLM token budget; at most once a minute per set of servers (429 with Retry-After sooner)",
  ),
});

const OverviewBody = z
  .object({
    status: z
      .enum(["ready", "generating", "empty"])
      .openapi({ description: "generating: another instance is writing the summary (the last one is shown); empty: you can see no server" }),
    summary: z.string().nullable(),
    generated_at: z.string().nullable().optional(),
    stale_at: z.string().nullable().optional(),
    llm: z.enum(["configured", "unconfigured", "disabled"]).optional().openapi({
      description: "unconfigured: no LLM provider; disabled: llm.overview_summary is false. Either way no summary, and the snapshot is still there",
    }),
    snapshot: z.record(z.string(), JsonValue).openapi({
      type: "object",
      additionalProperties: {},
      description: "Servers, alert totals and top alerts, maintenance windows now and in the next 24 h, the last day's events",
    }),
  })
  .openapi("Overview");

function parseIds(given: string | string[]): number[] {
  const parts = [given]
    .flat()
    .join(",")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (!parts.length || parts.some((p) => !/^\d{1,10}$/.test(p) || Number(p) <= 0))
    throw new InputError("connection_ids: a comma-separated list of positive integers");
  return [...new Set(parts.map(Number))];
}

const route = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/overview",
    tags: ["AI"],
    summary: "The estate at a glance, with an LLM's summary of it (written again only when something significant changes)",
    request: { query: Query },
    responses: { 200: json(OverviewBody, "The overview of what you can see"), ...errorResponses(400, 401, 404, 429, 502, 504) },
  }),
);

export const overviewRoutes = newRouter().openapi(route, async (c) => {
  const q = c.req.valid("query");
  if ((q.scope_type === undefined) !== (q.scope_id === undefined)) throw new InputError("scope_type and scope_id go together: give both or neither");
  const scope = { connectionIds: q.connection_ids === undefined ? undefined : parseIds(q.connection_ids), scopeType: q.scope_type, scopeId: q.scope_id };
  const result = await overviewFor(c.get("db"), await authority(c), c.get("config").llm, c.get("log"), scope, q.refresh ? payer(c) : undefined);
  return c.json(result as unknown as z.infer<typeof OverviewBody>, 200);
});

/** How often a stream looks for a change (in this instance or any other). */
export const OVERVIEW_POLL_MS = 10_000;
const STREAM_KEEPALIVE_MS = 30_000;

const streamRoute = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/overview/stream",
    tags: ["AI"],
    summary: "The overview as server-sent events: the current one at once, then each new summary",
    description:
      "Each event is `id: <generated_at>`, `event: overview`, `data: <the overview as one line of JSON>`. The stream looks for changes every 10 s (a new summary written by any pglens instance, or a significant change, which writes one) and sends `: keepalive` every 30 s. Same query as GET /api/v1/overview, without `refresh`. Each event is for the caller as they are at that moment: when the credential no longer holds (signed out, revoked, expired, user disabled) or the servers asked for are no longer visible, one `error` event ends the stream.",
    request: { query: Query.omit({ refresh: true }) },
    responses: {
      200: { description: "text/event-stream of overview events", content: { "text/event-stream": { schema: z.string() } } },
      ...errorResponses(400, 401, 404),
    },
  }),
);

export const overviewStreamRoutes = newRouter().openapi(streamRoute, async (c) => {
  const q = c.req.valid("query");
  if ((q.scope_type === undefined) !== (q.scope_id === undefined)) throw new InputError("scope_type and scope_id go together: give both or neither");
  const scope = { connectionIds: q.connection_ids === undefined ? undefined : parseIds(q.connection_ids), scopeType: q.scope_type, scopeId: q.scope_id };
  const db = c.get("db");
  const current = (a: Authority) => overviewFor(db, a, c.get("config").llm, c.get("log"), scope);
  const first = await current(await authority(c)); // answers 404 before the stream starts when nothing asked for is visible
  const stillAllowed = credentialCheck(c, 0);
  return streamSSE(c, async (stream) => {
    let open = true;
    stream.onAbort(() => {
      open = false;
    });
    const keepalive = setInterval(() => void stream.write(": keepalive\n\n").catch(() => {}), STREAM_KEEPALIVE_MS);
    let last = "";
    const send = async (o: Overview) => {
      const id = ("generated_at" in o && o.generated_at) || o.status;
      const key = `${id}|${o.summary}`;
      if (key === last) return;
      last = key;
      await stream.writeSSE({ id, event: "overview", data: JSON.stringify(o) });
    };
    try {
      await send(first);
      while (open) {
        await stream.sleep(OVERVIEW_POLL_MS);
        if (!open) break;
        // Each event is for the caller as they are now: gone, or seeing less, before anything is written.
        const a = await stillAllowed();
        if (!a) throw new Error(CREDENTIAL_GONE);
        await send(await current(a));
      }
    } catch (err) {
      if (open) await stream.writeSSE({ event: "error", data: JSON.stringify({ error: (err as Error).message }) });
    } finally {
      clearInterval(keepalive);
    }
  });
});
