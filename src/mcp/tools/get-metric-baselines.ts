import { z } from "zod";
import { storedBaselines } from "../../alerts/baseline-store.ts";
import { connectionAccess } from "../../auth/rbac.ts";
import { listConnections } from "../../datastore/connections.ts";
import { FROM_USERS } from "../fence.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { oneConnection, permittedConnections } from "../vocabulary.ts";

const COLUMNS = [
  "connection_id",
  "connection_name",
  "metric_name",
  "database_name",
  "period_type",
  "day_of_week",
  "hour_of_day",
  "mean",
  "stddev",
  "min",
  "max",
  "sample_count",
] as const;

/** The baselines the alerter keeps (refreshed hourly from 7 days of samples), as the predecessor's tool listed them. */
export const getMetricBaselines = defineTool({
  name: "get_metric_baselines",
  title: "Get metric baselines",
  description:
    "What is normal for the metrics the alerter watches for anomalies, as TSV (" +
    COLUMNS.join(", ") +
    "). Refreshed hourly from the last 7 days: period_type all (every sample), hourly (hour_of_day 0-23, UTC) and daily " +
    "(day_of_week 0 = Sunday, UTC). metric_name is probe.metric, e.g. pg_stat_database.xact_commit_per_sec; database_name is empty for " +
    "a server-wide value. Without connection_id: every connection you may read. For any metric's statistics on demand, use " +
    "GET /api/v1/metrics/baselines.",
  inputSchema: z.object({
    connection_id: oneConnection().optional(),
    metric_name: z.string().min(1).max(200).optional().describe("Only this metric, e.g. pg_stat_database.xact_commit_per_sec (or xact_commit_per_sec)"),
  }),
  dataFrom: FROM_USERS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, access }) {
    const readable = (await listConnections(db)).filter((c) => connectionAccess(access, c) !== null);
    const ids = (await permittedConnections(db, access, args)) ?? readable.map((c) => c.id);
    const names = new Map(readable.map((c) => [c.id, c.name]));
    const wanted = (name: string) => args.metric_name === undefined || name === args.metric_name || name.endsWith(`.${args.metric_name}`);
    const rows = (await storedBaselines(db, ids))
      .filter((b) => wanted(b.metric_name))
      .sort(
        (a, b) =>
          String(names.get(a.connection_id)).localeCompare(String(names.get(b.connection_id))) ||
          a.metric_name.localeCompare(b.metric_name) ||
          a.database_name.localeCompare(b.database_name) ||
          a.period_type.localeCompare(b.period_type) ||
          a.period_value - b.period_value,
      );
    if (!rows.length)
      return args.metric_name === undefined
        ? "No metric baselines yet: the alerter computes them hourly once samples exist (anomaly detection must be enabled)."
        : `No metric baselines match ${JSON.stringify(args.metric_name)}; leave metric_name out to see which exist.`;
    return toTsv(
      COLUMNS,
      rows.map((b) => [
        b.connection_id,
        names.get(b.connection_id) ?? "",
        b.metric_name,
        b.database_name,
        b.period_type,
        b.period_type === "daily" ? b.period_value : null,
        b.period_type === "hourly" ? b.period_value : null,
        b.mean,
        b.stddev,
        b.min,
        b.max,
        b.sample_count,
      ]),
    );
  },
});
