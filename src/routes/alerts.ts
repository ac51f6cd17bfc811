import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { SEVERITIES } from "../vocabulary/builtin-rules.ts";
import { assertConnectionsPermitted } from "../auth/connection-access.ts";
import { type AlertRow, acknowledgeAlert, activeAlertCounts, listAlerts, saveAnalysis, unacknowledgeAlert } from "../datastore/alerts.ts";
import { writableAlert } from "../http/alert-access.ts";
import { USER, authority, guarded } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { estateView } from "../http/estate-view.ts";
import { Id, PathId, json, jsonBody, queryIds, queryFlag } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { parseRfc3339 } from "../metrics/window.ts";
import { parseConnectionIds } from "./metrics.ts";
import { readDb } from "../http/read-db.ts";

const tags = ["Alerts"];
const STATUSES = ["pending", "active", "acknowledged", "cleared"] as const;
const TYPES = ["threshold", "anomaly", "connection"] as const;

const Alert = z
  .object({
    id: z.number().int(),
    correlation_id: z.number().int().openapi({
      description:
        "Alerts raised on the same server or cluster within the correlation window (alerter_settings.correlation_window_seconds, 120 s) share it: the id of the group's first alert",
    }),
    alert_type: z.enum(TYPES),
    rule_id: z.number().int().nullable(),
    connection_id: z.number().int(),
    server_name: z.string(),
    database_name: z.string().openapi({ description: "'' for server-wide alerts" }),
    object_name: z.string().openapi({ description: "Table, slot, mount point or probe the alert is about; '' when none" }),
    probe_name: z.string().nullable().openapi({ description: "The probe the metric is read from; null for connection alerts" }),
    metric_name: z.string(),
    metric_value: z.number().nullable(),
    metric_unit: z.string().nullable(),
    threshold_value: z.number().nullable(),
    operator: z.string().nullable(),
    severity: z.enum(SEVERITIES),
    title: z.string(),
    description: z.string(),
    status: z.enum(STATUSES),
    triggered_at: z.string(),
    cleared_at: z.string().nullable(),
    clear_reason: z
      .string()
      .nullable()
      .openapi({ description: "Why it cleared: back within the threshold, the server is reachable again, the rule was disabled, no current value, ..." }),
    clear_value: z.number().nullable().openapi({ description: "The value that cleared it, where there is one (metric_value keeps the value it fired with)" }),
    last_updated: z.string(),
    anomaly_score: z.number().nullable(),
    anomaly_details: z
      .object({
        z_score: z.number(),
        baseline: z.object({ period_type: z.string(), period_value: z.number(), mean: z.number(), stddev: z.number(), sample_count: z.number().int() }),
        decided_by: z
          .enum(["similarity", "llm", "fail_safe"])
          .optional()
          .openapi({ description: "Anomaly review (tiers 2-3), when it ran: what let the alert through" }),
        tier2_score: z.number().nullable().optional().openapi({ description: "Cosine similarity of the most similar past anomaly review" }),
        tier3_result: z
          .object({
            decision: z.enum(["alert", "suppress"]).optional(),
            confidence: z.number().nullable().optional(),
            reasoning: z.string().optional(),
            read_as: z.string().optional(),
            error: z.string().optional(),
          })
          .nullable()
          .optional()
          .openapi({ description: "The LLM's classification, or the error that made the review fail safe" }),
        reused_review: z.boolean().optional().openapi({ description: "true when an earlier review of the same key decided" }),
      })
      .nullable()
      .openapi({ description: "Anomaly alerts: how far the value was from the baseline it was judged against, and how it was reviewed" }),
    acknowledged_at: z.string().nullable(),
    acknowledged_by: z.string().nullable(),
    ack_message: z.string().nullable(),
    false_positive: z.boolean().nullable(),
    ai_analysis: z.string().nullable(),
    ai_analysis_metric_value: z.number().nullable(),
  })
  .openapi("Alert");

const ListQuery = z.object({
  connection_id: queryIds("Connection id; repeat the parameter or separate ids with commas for several").optional(),
  connection_ids: queryIds("Alternative spelling of connection_id").optional(),
  status: z.enum(STATUSES).optional(),
  exclude_cleared: queryFlag("true: only alerts not yet cleared"),
  severity: z.enum(SEVERITIES).optional(),
  alert_type: z.enum(TYPES).optional(),
  correlation_id: PathId.optional().openapi({ description: "Only the alerts of this correlation group" }),
  start_time: z.string().optional().openapi({ description: "RFC 3339; alerts triggered at or after" }),
  end_time: z.string().optional().openapi({ description: "RFC 3339; alerts triggered at or before" }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
});
const AlertIdBody = z.object({ alert_id: Id });

const r = {
  list: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/alerts",
      tags,
      summary: "Alerts of the connections the caller may read, newest first",
      request: { query: ListQuery },
      responses: {
        200: json(z.object({ alerts: z.array(Alert), total: z.number().int() }), "Alerts and the number matching"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
  ),
  counts: guarded(
    USER,
    createRoute({
      method: "get",
      path: "/api/v1/alerts/counts",
      tags,
      summary: "Active alerts per connection",
      responses: { 200: json(z.object({ total: z.number().int(), by_server: z.record(z.string(), z.number().int()) }), "Counts"), ...errorResponses(401) },
    }),
  ),
  acknowledge: guarded(
    USER,
    createRoute({
      method: "post",
      path: "/api/v1/alerts/acknowledge",
      tags,
      summary: "Acknowledge an active alert",
      request: { body: jsonBody(AlertIdBody.extend({ message: z.string().max(2000).optional(), false_positive: z.boolean().optional() }).strict()) },
      responses: { 200: json(z.object({ status: z.literal("acknowledged") }), "Acknowledged"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  unacknowledge: guarded(
    USER,
    createRoute({
      method: "delete",
      path: "/api/v1/alerts/acknowledge",
      tags,
      summary: "Remove the acknowledgment: the alert is active again",
      request: { query: z.object({ alert_id: PathId }) },
      responses: { 200: json(z.object({ status: z.literal("active") }), "Active again"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  analysis: guarded(
    USER,
    createRoute({
      method: "put",
      path: "/api/v1/alerts/analysis",
      tags,
      summary: "Store an analysis of an alert produced by a client (and the metric value it was made for)",
      request: { body: jsonBody(AlertIdBody.extend({ analysis: z.string().min(1).max(100_000), metric_value: z.number().optional() }).strict()) },
      responses: { 200: json(z.object({ status: z.literal("saved") }), "Saved"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : (v as string | null));

export function alertJson(a: AlertRow) {
  return {
    ...a,
    triggered_at: iso(a.triggered_at),
    cleared_at: iso(a.cleared_at),
    last_updated: iso(a.last_updated),
    acknowledged_at: iso(a.acknowledged_at),
  } as z.infer<typeof Alert>;
}

/** The connections the caller may read. */
async function visibleIds(c: Context<AppEnv>): Promise<number[]> {
  return (await estateView(c)).connections.map((row) => row.id);
}

export const alertRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("db");
    let ids = await visibleIds(c);
    const named = [q.connection_id ?? [], q.connection_ids ?? []].flat();
    if (named.length) {
      const wanted = parseConnectionIds(named);
      await assertConnectionsPermitted(db, wanted, await authority(c));
      ids = wanted;
    }
    const result = await listAlerts(readDb(c), {
      connectionIds: ids,
      status: q.status,
      excludeCleared: q.exclude_cleared,
      severity: q.severity,
      alertType: q.alert_type,
      correlationId: q.correlation_id,
      startTime: q.start_time === undefined ? undefined : new Date(parseRfc3339(q.start_time, "start_time")),
      endTime: q.end_time === undefined ? undefined : new Date(parseRfc3339(q.end_time, "end_time")),
      limit: q.limit,
      offset: q.offset,
    });
    return c.json({ alerts: result.alerts.map(alertJson), total: result.total }, 200);
  })
  .openapi(r.counts, async (c) => {
    const counts = await activeAlertCounts(readDb(c), await visibleIds(c));
    let total = 0;
    for (const n of counts.values()) total += n;
    return c.json({ total, by_server: Object.fromEntries([...counts].map(([id, n]) => [String(id), n])) }, 200);
  })
  .openapi(r.acknowledge, async (c) => {
    const body = c.req.valid("json");
    await writableAlert(c, body.alert_id);
    const who = (await authority(c)).principal.username;
    await acknowledgeAlert(c.get("db"), body.alert_id, who, body.message ?? "", body.false_positive ?? false);
    return c.json({ status: "acknowledged" as const }, 200);
  })
  .openapi(r.unacknowledge, async (c) => {
    const { alert_id } = c.req.valid("query");
    await writableAlert(c, alert_id);
    await unacknowledgeAlert(c.get("db"), alert_id);
    return c.json({ status: "active" as const }, 200);
  })
  .openapi(r.analysis, async (c) => {
    const body = c.req.valid("json");
    await writableAlert(c, body.alert_id);
    await saveAnalysis(c.get("db"), body.alert_id, body.analysis, body.metric_value ?? null);
    return c.json({ status: "saved" as const }, 200);
  });
