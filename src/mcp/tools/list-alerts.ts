import { z } from "zod";
import { connectionAccess } from "../../auth/rbac.ts";
import { SEVERITIES } from "../../vocabulary/builtin-rules.ts";
import { listAlerts } from "../../datastore/alerts.ts";
import { listConnections } from "../../datastore/connections.ts";
import { parseRfc3339 } from "../../metrics/window.ts";
import { ToolError, defineTool } from "../tool.ts";
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
] as const;

export const listAlertsTool = defineTool({
  name: "list_alerts",
  title: "List alerts",
  description:
    "Lists alerts raised by pglens's alerter on the connections you may read, newest first, as TSV (" +
    COLUMNS.join(", ") +
    "). " +
    "Filter by connection_ids, status (active, acknowledged, cleared), exclude_cleared, severity, alert_type (threshold, anomaly, connection) " +
    "and time_start/time_end (RFC 3339, on triggered_at). At most `limit` rows (default 100, max 1000).",
  inputSchema: z.object({
    connection_ids: z.array(z.number().int().positive()).optional(),
    status: z.enum(["active", "acknowledged", "cleared"]).optional(),
    exclude_cleared: z.boolean().optional(),
    severity: z.enum(SEVERITIES).optional(),
    alert_type: z.enum(["threshold", "anomaly", "connection"]).optional(),
    time_start: z.string().optional(),
    time_end: z.string().optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  }),
  dataFrom: RECORDED_BY_PGLENS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { db, access }) {
    const visible = (await listConnections(db)).filter((c) => connectionAccess(access, c) !== null).map((c) => c.id);
    const hidden = args.connection_ids?.find((id) => !visible.includes(id));
    if (hidden !== undefined) throw new ToolError(`connection ${hidden} not found`);
    const { alerts } = await listAlerts(db, {
      connectionIds: args.connection_ids ?? visible,
      status: args.status,
      excludeCleared: args.exclude_cleared,
      severity: args.severity,
      alertType: args.alert_type,
      startTime: args.time_start === undefined ? undefined : new Date(parseRfc3339(args.time_start, "time_start")),
      endTime: args.time_end === undefined ? undefined : new Date(parseRfc3339(args.time_end, "time_end")),
      limit: args.limit ?? 100,
      offset: 0,
    });
    return toTsv(
      COLUMNS,
      alerts.map((a) => COLUMNS.map((c) => a[c] as string)),
    );
  },
});
