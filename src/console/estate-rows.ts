/**
 * What the console shows of each server the user may read: its status, its open alerts by severity, sessions and
 * the time of its last sample (a few statements for the whole estate), and for the estate page transactions per
 * second over the last day (one metrics query per server, for a sparkline).
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import { coverage } from "../blackouts/scope.ts";
import { isDemoHost } from "../collector/demo-history.ts";
import { activeBlackouts } from "../datastore/blackouts.ts";
import type { ConnectionRow } from "../datastore/connections.ts";
import { latestSamples } from "../samples/read-latest-sample.ts";
import { eachLimited } from "../each-limited.ts";
import { runMetricsQuery } from "../queries/query.ts";
import { type ServerStatus, serverStatus } from "./server-status.ts";

const DAY_MS = 86_400_000;
const SPARKLINE_POINTS = 48;

export interface Standing {
  status: ServerStatus;
  connectionError: string | null;
  alerts: { critical: number; warning: number; info: number };
  sessions: number | null;
  lastSampleAt: string | null;
}

export interface EstateRow extends Standing {
  id: number;
  name: string;
  /** Transactions (commits) per second over the last 24 h, oldest first; null where nothing was sampled. */
  tps: Array<number | null>;
}

export async function standings(db: Queryable, connections: readonly ConnectionRow[]): Promise<Map<number, Standing>> {
  const ids = connections.map((c) => c.id);
  const [alertRows, windows, latest, clusters] = await Promise.all([
    db.query<{ connection_id: number; severity: string; n: number }>(
      "SELECT connection_id, severity, count(*)::int AS n FROM alerts WHERE connection_id = ANY($1::int[]) AND cleared_at IS NULL AND status <> 'pending' GROUP BY 1, 2",
      [ids],
    ),
    activeBlackouts(db),
    latestSamples<{ numbackends: number | null }>(db, "pg_stat_database", ids, "TRUE", ["numbackends"]),
    db.query<{ id: number; group_id: number | null }>("SELECT id, group_id FROM clusters"),
  ]);
  const groupOf = new Map(clusters.map((g) => [g.id, g.group_id]));
  return new Map(
    connections.map((c) => {
      const alerts = { critical: 0, warning: 0, info: 0 };
      for (const a of alertRows) if (a.connection_id === c.id && a.severity in alerts) alerts[a.severity as keyof typeof alerts] += a.n;
      const placement = { connectionId: c.id, clusterId: c.cluster_id, groupId: c.cluster_id === null ? null : (groupOf.get(c.cluster_id) ?? null) };
      // A window on one database leaves the rest of the server watched: only a whole-server window counts.
      const inBlackout = windows.some((w) => "all" in (coverage(w, placement) ?? {}));
      const sample = latest.get(c.id)!;
      const sessions = sample.rows.length ? sample.rows.reduce((sum, r) => sum + Number(r.numbackends ?? 0), 0) : null;
      const openAlerts = alerts.critical + alerts.warning + alerts.info;
      const status = serverStatus({ demo: isDemoHost(c.host), connectionError: c.connection_error, inBlackout, openAlerts });
      return [c.id, { status, connectionError: c.connection_error, alerts, sessions, lastSampleAt: sample.collected_at }];
    }),
  );
}

export async function estateRows(db: Queryable, access: Authority, connections: readonly ConnectionRow[], now = Date.now()): Promise<EstateRow[]> {
  const stand = await standings(db, connections);
  const tps = new Map<number, Array<number | null>>();
  await eachLimited(connections, 4, async ({ id }) => {
    const result = await runMetricsQuery(db, {
      access,
      probeName: "pg_stat_database",
      connectionIds: [id],
      window: { start: now - DAY_MS, end: now },
      buckets: SPARKLINE_POINTS,
      metrics: "xact_commit_per_sec",
    });
    tps.set(id, result.series[0]?.data.map((p) => p.value) ?? []);
  });
  return connections.map((c) => ({ id: c.id, name: c.name, ...stand.get(c.id)!, tps: tps.get(c.id) ?? [] }));
}
