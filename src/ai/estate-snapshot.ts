/**
 * What the overview summarizes: the servers a caller can see with their state and alerts, the alert
 * totals, maintenance windows now and in the next day, and the last day's notable events. Built from the
 * datastore only; the fingerprint names what counts as a significant change.
 */
import type { Queryable } from "../../drivers/types.ts";
import { isDemoHost } from "../collector/demo-history.ts";
import type { ConnectionRow } from "../datastore/connections.ts";
import { type Visible, listBlackouts } from "../datastore/blackouts.ts";
import { EVENT_TYPES, timelineEvents } from "../timeline/events.ts";

const DAY_MS = 86_400_000;
const SEVERITY_RANK: Record<string, number> = { critical: 0, warning: 1, info: 2 };

export interface EstateSnapshot {
  timestamp: string;
  server_total: number;
  server_online: number;
  server_offline: number;
  server_warning: number;
  /** demo: pglens's generated demo history, never contacted (neither online nor offline). */
  servers: Array<{ id: number; name: string; status: "online" | "offline" | "warning" | "demo"; role: string | null; active_alert_count: number }>;
  alert_total: number;
  alert_critical: number;
  alert_warning: number;
  alert_info: number;
  top_alerts: Array<{ title: string; server_name: string; severity: string }>;
  active_blackouts: Array<{ scope: string; reason: string; start_time: string; end_time: string }>;
  upcoming_blackouts: Array<{ scope: string; reason: string; start_time: string; end_time: string }>;
  recent_events: Array<{ event_type: string; server_name: string; occurred_at: string; severity: string; title: string; summary: string }>;
}

export async function estateSnapshot(db: Queryable, connections: readonly ConnectionRow[], visible: Visible, now = new Date()): Promise<EstateSnapshot> {
  const ids = connections.map((c) => c.id);
  const alerts = await db.query<{ connection_id: number; severity: string; title: string; triggered_at: Date }>(
    "SELECT connection_id, severity, title, triggered_at FROM alerts WHERE connection_id = ANY($1::int[]) AND cleared_at IS NULL",
    [ids],
  );
  const windows = (await listBlackouts(db, { limit: 1000, offset: 0 }, visible)).blackouts;
  const events = await timelineEvents(db, {
    connectionIds: ids,
    names: new Map(connections.map((c) => [c.id, c.name])),
    visible,
    from: new Date(now.getTime() - DAY_MS),
    to: now,
    types: new Set(EVENT_TYPES),
  });

  const alertsOf = (id: number) => alerts.filter((a) => a.connection_id === id).length;
  const servers = connections.map((c) => {
    const count = alertsOf(c.id);
    const status = isDemoHost(c.host) ? ("demo" as const) : c.connection_error ? ("offline" as const) : count > 0 ? ("warning" as const) : ("online" as const);
    return { id: c.id, name: c.name, status, role: c.role, active_alert_count: count };
  });
  const name = new Map(connections.map((c) => [c.id, c.name]));
  const window = (b: (typeof windows)[number]) => ({
    scope: b.scope,
    reason: b.reason,
    start_time: b.start_time.toISOString(),
    end_time: b.end_time.toISOString(),
  });
  const t = now.getTime();
  return {
    timestamp: now.toISOString(),
    server_total: servers.length,
    server_online: servers.filter((s) => s.status === "online").length,
    server_offline: servers.filter((s) => s.status === "offline").length,
    server_warning: servers.filter((s) => s.status === "warning").length,
    servers,
    alert_total: alerts.length,
    alert_critical: alerts.filter((a) => a.severity === "critical").length,
    alert_warning: alerts.filter((a) => a.severity === "warning").length,
    alert_info: alerts.filter((a) => a.severity === "info").length,
    top_alerts: [...alerts]
      .sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || b.triggered_at.getTime() - a.triggered_at.getTime())
      .slice(0, 5)
      .map((a) => ({ title: a.title, server_name: name.get(a.connection_id) ?? "unknown", severity: a.severity })),
    active_blackouts: windows.filter((b) => b.start_time.getTime() <= t && t <= b.end_time.getTime()).map(window),
    upcoming_blackouts: windows.filter((b) => b.start_time.getTime() > t && b.start_time.getTime() <= t + DAY_MS).map(window),
    recent_events: events.slice(0, 10).map((e) => ({
      event_type: e.event_type,
      server_name: e.server_name,
      occurred_at: e.occurred_at,
      severity: e.severity,
      title: e.title,
      summary: e.summary,
    })),
  };
}

/** What must change for a new summary: any count, the set of active windows, or a new restart. */
export function fingerprint(s: EstateSnapshot): string {
  const lastRestart = s.recent_events.find((e) => e.event_type === "restart")?.occurred_at ?? null;
  return JSON.stringify([
    s.server_total,
    s.server_online,
    s.server_offline,
    s.server_warning,
    s.alert_total,
    s.alert_critical,
    s.alert_warning,
    s.alert_info,
    s.active_blackouts.length,
    lastRestart,
  ]);
}
