import { z } from "zod";
import { SEVERITIES } from "../../vocabulary/builtin-rules.ts";
import { listAlerts } from "../../datastore/alerts.ts";
import { toolInstant } from "../../metrics/window.ts";
import { defineTool } from "../tool.ts";
import { TIME_FORMS, askedConnections, connectionArgs } from "../vocabulary.ts";
import { toTsv } from "../tsv.ts";
import { RECORDED_BY_PGLENS } from "../fence.ts";

const COLUMNS = [
  "id",
  "alert_type",
  "severity",
  "status",
  "server_name",
  "connection_id",
  "database_name",
  "object_name",
  "title",
  "metric_name",
  "metric_value",
  "metric_unit",
  "operator",
  "threshold_value",
  "triggered_at",
  "cleared_at",
  "acknowledged_by",
  "correlation_id",
] as const;

export const listAlertsTool = defineTool({
  name: "list_alerts",
  title: "List alerts",
  description:
    "Lists alerts raised by pglens's alerter on the connections you may read, newest first, as TSV (" +
    COLUMNS.join(", ") +
    "). " +
    "Filter by connection_id/connection_ids, status, exclude_cleared, severity, alert_type, correlation_id and time_start/time_end (on triggered_at). " +
    "At most `limit` rows (default 100).",
  inputSchema: z.object({
    ...connectionArgs,
    status: z.enum(["active", "acknowledged", "cleared"]).optional().describe("Only alerts in this state"),
    exclude_cleared: z.boolean().optional().describe("Leave out cleared alerts (default false)"),
    severity: z.enum(SEVERITIES).optional().describe("Only alerts of this severity"),
    alert_type: z.enum(["threshold", "anomaly", "connection"]).optional().describe("Only alerts of this kind"),
    correlation_id: z
      .number()
      .int()
      .min(1)
      .max(2_147_483_647)
      .optional()
      .describe("Only the alerts of this correlation group (alerts raised on one server or cluster within the correlation window)"),
    time_start: z.string().max(64).optional().describe(`Only alerts triggered at or after this: ${TIME_FORMS} (relative: that long before now)`),
    time_end: z.string().max(64).optional().describe(`Only alerts triggered at or before this: ${TIME_FORMS} (relative: that long before now), or now`),
    limit: z.number().int().min(1).max(1000).optional().describe("Most rows to return, 1 to 1000 (default 100)"),
  }),
  dataFrom: RECORDED_BY_PGLENS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, access, now }) {
    const { alerts } = await listAlerts(db, {
      connectionIds: await askedConnections(db, access, args),
      status: args.status,
      excludeCleared: args.exclude_cleared,
      severity: args.severity,
      alertType: args.alert_type,
      correlationId: args.correlation_id,
      startTime: args.time_start === undefined ? undefined : new Date(toolInstant(args.time_start, "time_start", now)),
      endTime: args.time_end === undefined ? undefined : new Date(toolInstant(args.time_end, "time_end", now)),
      limit: args.limit ?? 100,
      offset: 0,
    });
    return toTsv(
      COLUMNS,
      alerts.map((a) => COLUMNS.map((c) => a[c] as string)),
    );
  },
});
