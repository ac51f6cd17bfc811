/**
 * The timeline: one list of what happened to the servers, merged from its sources (configuration, hba and
 * ident changes, restarts, extension changes from the samples; alerts, acknowledgments and blackouts from
 * their tables). Ids are built from what an event is about, so the same event has the same id on every call.
 */
import type { Queryable } from "../../drivers/types.ts";
import type { Visible } from "../datastore/blackouts.ts";
import { InputError } from "../errors.ts";
import { snapshotChanges, type RowChange } from "./snapshot-diff.ts";

export const EVENT_TYPES = [
  "config_change",
  "hba_change",
  "ident_change",
  "restart",
  "extension_change",
  "alert_fired",
  "alert_cleared",
  "alert_acknowledged",
  "blackout_started",
  "blackout_ended",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface TimelineEvent {
  id: string;
  event_type: EventType;
  connection_id: number;
  server_name: string;
  occurred_at: string;
  severity: "info" | "warning" | "critical";
  title: string;
  summary: string;
  details: Record<string, unknown>;
}

export interface TimelineQuery {
  connectionIds: readonly number[];
  /** Names of the connections in `connectionIds`. */
  names: ReadonlyMap<number, string>;
  /** For blackout events: what the caller can see. */
  visible: Visible;
  from: Date;
  to: Date;
  types: ReadonlySet<EventType>;
}

/** A comma-separated list of event types; empty means all. Throws InputError naming an unknown one. */
export function parseEventTypes(value: string | undefined): Set<EventType> {
  if (value === undefined || value.trim() === "") return new Set(EVENT_TYPES);
  const types = value
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = types.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown !== undefined) throw new InputError(`event_types: unknown event type ${JSON.stringify(unknown)} (known: ${EVENT_TYPES.join(", ")})`);
  return new Set(types as EventType[]);
}

type Source = (db: Queryable, q: TimelineQuery) => Promise<TimelineEvent[]>;

const ms = (d: Date) => d.getTime();

/** One event per sample with changes of a snapshot probe. */
function snapshotSource(
  type: EventType,
  probe: string,
  compared: string[],
  prefix: string,
  describe: (changes: RowChange[]) => { title: string; summary: string; details: Record<string, unknown> },
): Source {
  return async (db, q) => {
    const rows = await snapshotChanges(db, probe, compared, q.connectionIds, q.from, q.to);
    const groups = new Map<string, RowChange[]>();
    for (const r of rows) {
      const key = `${r.connection_id}-${ms(r.collected_at)}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    return [...groups].map(([key, changes]) => ({
      id: `${prefix}-${key}`,
      event_type: type,
      connection_id: changes[0].connection_id,
      server_name: q.names.get(changes[0].connection_id) ?? "Unknown",
      occurred_at: changes[0].collected_at.toISOString(),
      severity: "info" as const,
      ...describe(changes),
    }));
  };
}

const list = (names: string[]) => (names.length > 5 ? `${names.slice(0, 5).join(", ")} and ${names.length - 5} more` : names.join(", "));

const SOURCES: Record<EventType, Source> = {
  config_change: snapshotSource("config_change", "pg_settings", ["setting"], "config", (changes) => ({
    title: "Configuration changed",
    summary: `Changed ${changes.length} setting${changes.length === 1 ? "" : "s"}: ${list(changes.map((c) => String(c.name)))}`,
    details: {
      change_count: changes.length,
      changes: changes.map((c) => ({ name: c.name, old_value: c.old_setting, new_value: c.new_setting, change_type: c.change_type })),
    },
  })),
  hba_change: snapshotSource(
    "hba_change",
    "pg_hba_file_rules",
    ["type", "database", "user_name", "address", "netmask", "auth_method", "options"],
    "hba",
    (changes) => ({
      title: "pg_hba.conf changed",
      summary: `${changes.length} rule${changes.length === 1 ? "" : "s"} added, removed or changed`,
      details: {
        change_count: changes.length,
        changes: changes.map((c) => ({
          line_number: c.line_number,
          change_type: c.change_type,
          before:
            c.change_type === "added"
              ? null
              : { type: c.old_type, database: c.old_database, user_name: c.old_user_name, address: c.old_address, auth_method: c.old_auth_method },
          after:
            c.change_type === "removed"
              ? null
              : { type: c.new_type, database: c.new_database, user_name: c.new_user_name, address: c.new_address, auth_method: c.new_auth_method },
        })),
      },
    }),
  ),
  ident_change: snapshotSource("ident_change", "pg_ident_file_mappings", ["map_name", "sys_name", "pg_username"], "ident", (changes) => ({
    title: "pg_ident.conf changed",
    summary: `${changes.length} mapping${changes.length === 1 ? "" : "s"} added, removed or changed`,
    details: {
      change_count: changes.length,
      changes: changes.map((c) => ({
        line_number: c.line_number,
        change_type: c.change_type,
        map_name: c.new_map_name ?? c.old_map_name,
        sys_name: c.new_sys_name ?? c.old_sys_name,
        pg_username: c.new_pg_username ?? c.old_pg_username,
      })),
    },
  })),
  restart: async (db, q) =>
    (await snapshotChanges(db, "pg_postmaster", ["start_time"], q.connectionIds, q.from, q.to)).map((c) => ({
      id: `restart-${c.connection_id}-${ms(c.collected_at)}`,
      event_type: "restart" as const,
      connection_id: c.connection_id,
      server_name: q.names.get(c.connection_id) ?? "Unknown",
      // When it started again, not when pglens noticed.
      occurred_at: (c.new_start_time as Date).toISOString(),
      severity: "warning" as const,
      title: "Server restarted",
      summary: `Started at ${(c.new_start_time as Date).toISOString()} (previously up since ${(c.old_start_time as Date).toISOString()})`,
      details: {
        previous_start_time: (c.old_start_time as Date).toISOString(),
        new_start_time: (c.new_start_time as Date).toISOString(),
        detected_at: c.collected_at.toISOString(),
      },
    })),
  extension_change: snapshotSource("extension_change", "pg_extension", ["extversion"], "ext", (changes) => ({
    title: "Extensions changed",
    summary: list(
      changes.map(
        (c) =>
          `${c.extname} ${c.change_type === "removed" ? "removed" : c.change_type === "added" ? `${c.new_extversion} added` : `${c.old_extversion} -> ${c.new_extversion}`} in ${c.database_name}`,
      ),
    ),
    details: {
      change_count: changes.length,
      changes: changes.map((c) => ({
        name: c.extname,
        database: c.database_name,
        old_version: c.old_extversion,
        version: c.new_extversion,
        change_type: c.change_type,
      })),
    },
  })),
  alert_fired: async (db, q) =>
    (
      await db.query<{
        id: number;
        connection_id: number;
        triggered_at: Date;
        severity: TimelineEvent["severity"];
        title: string;
        description: string;
        alert_type: string;
        metric_name: string;
        metric_value: number | null;
        threshold_value: number | null;
        operator: string | null;
        database_name: string;
      }>(
        `SELECT id::int AS id, connection_id, triggered_at, severity, title, description, alert_type, metric_name, metric_value, threshold_value, operator, database_name
           FROM alerts WHERE connection_id = ANY($1::int[]) AND triggered_at >= $2 AND triggered_at <= $3
            AND pending_since IS NULL -- a pending alert has not fired (yet, or ever)`,
        [q.connectionIds, q.from.toISOString(), q.to.toISOString()],
      )
    ).map((a) => ({
      id: `alert-fired-${a.id}`,
      event_type: "alert_fired" as const,
      connection_id: a.connection_id,
      server_name: q.names.get(a.connection_id) ?? "Unknown",
      occurred_at: a.triggered_at.toISOString(),
      severity: a.severity,
      title: `Alert fired: ${a.title}`,
      summary: a.description,
      details: {
        alert_id: a.id,
        alert_type: a.alert_type,
        metric_name: a.metric_name,
        metric_value: a.metric_value,
        threshold_value: a.threshold_value,
        operator: a.operator,
        database_name: a.database_name,
      },
    })),
  alert_cleared: async (db, q) =>
    (
      await db.query<{ id: number; connection_id: number; triggered_at: Date; cleared_at: Date; severity: string; title: string }>(
        `SELECT id::int AS id, connection_id, triggered_at, cleared_at, severity, title FROM alerts
          WHERE connection_id = ANY($1::int[]) AND cleared_at >= $2 AND cleared_at <= $3 AND pending_since IS NULL`,
        [q.connectionIds, q.from.toISOString(), q.to.toISOString()],
      )
    ).map((a) => ({
      id: `alert-cleared-${a.id}`,
      event_type: "alert_cleared" as const,
      connection_id: a.connection_id,
      server_name: q.names.get(a.connection_id) ?? "Unknown",
      occurred_at: a.cleared_at.toISOString(),
      severity: "info" as const,
      title: `Alert cleared: ${a.title}`,
      summary: "The condition is no longer present",
      details: {
        alert_id: a.id,
        original_severity: a.severity,
        triggered_at: a.triggered_at.toISOString(),
        duration_seconds: Math.round((ms(a.cleared_at) - ms(a.triggered_at)) / 1000),
      },
    })),
  alert_acknowledged: async (db, q) =>
    (
      await db.query<{
        id: number;
        alert_id: number;
        connection_id: number;
        acknowledged_at: Date;
        acknowledged_by: string;
        message: string;
        false_positive: boolean;
        severity: string;
        title: string;
      }>(
        `SELECT k.id::int AS id, a.id::int AS alert_id, a.connection_id, k.acknowledged_at, k.acknowledged_by, k.message, k.false_positive, a.severity, a.title
           FROM alert_acknowledgments k JOIN alerts a ON a.id = k.alert_id
          WHERE a.connection_id = ANY($1::int[]) AND k.acknowledged_at >= $2 AND k.acknowledged_at <= $3`,
        [q.connectionIds, q.from.toISOString(), q.to.toISOString()],
      )
    ).map((k) => ({
      id: `alert-ack-${k.id}`,
      event_type: "alert_acknowledged" as const,
      connection_id: k.connection_id,
      server_name: q.names.get(k.connection_id) ?? "Unknown",
      occurred_at: k.acknowledged_at.toISOString(),
      severity: "info" as const,
      title: `${k.false_positive ? "Alert marked false positive" : "Alert acknowledged"}: ${k.title}`,
      summary: k.message || `Acknowledged by ${k.acknowledged_by}`,
      details: {
        alert_id: k.alert_id,
        acknowledged_by: k.acknowledged_by,
        false_positive: k.false_positive,
        message: k.message,
        original_severity: k.severity,
      },
    })),
  blackout_started: (db, q) => blackoutEvents(db, q, "start"),
  blackout_ended: (db, q) => blackoutEvents(db, q, "end"),
};

/** Blackouts the caller can see that start (or end) in the window; an end still ahead has not happened. */
async function blackoutEvents(db: Queryable, q: TimelineQuery, edge: "start" | "end"): Promise<TimelineEvent[]> {
  const column = edge === "start" ? "start_time" : "end_time";
  const rows = await db.query<{
    id: number;
    scope: string;
    connection_id: number | null;
    reason: string;
    created_by: string;
    start_time: Date;
    end_time: Date;
    target: string | null;
  }>(
    `SELECT b.id, b.scope, b.connection_id, b.reason, b.created_by, b.start_time, b.end_time, coalesce(c.name, cl.name, g.name) AS target
       FROM blackouts b LEFT JOIN connections c ON c.id = b.connection_id LEFT JOIN clusters cl ON cl.id = b.cluster_id LEFT JOIN cluster_groups g ON g.id = b.group_id
      WHERE b.${column} >= $1 AND b.${column} <= least($2, now())
        AND (b.scope = 'estate' OR b.connection_id = ANY($3::int[]) OR b.cluster_id = ANY($4::int[]) OR b.group_id = ANY($5::int[]))`,
    [q.from.toISOString(), q.to.toISOString(), q.visible.connections, q.visible.clusters, q.visible.groups],
  );
  // Asked about particular servers: windows on those servers, and the wider ones (estate, cluster, group).
  return rows
    .filter((b) => b.connection_id === null || q.connectionIds.includes(b.connection_id))
    .map((b) => ({
      id: `blackout-${edge}-${b.id}`,
      event_type: edge === "start" ? ("blackout_started" as const) : ("blackout_ended" as const),
      connection_id: b.connection_id ?? 0,
      server_name: b.scope === "estate" ? "All servers" : (b.target ?? "Unknown"),
      occurred_at: (edge === "start" ? b.start_time : b.end_time).toISOString(),
      severity: "info" as const,
      title: edge === "start" ? "Blackout started" : "Blackout ended",
      summary: b.reason,
      details: {
        blackout_id: b.id,
        scope: b.scope,
        reason: b.reason,
        created_by: b.created_by,
        start_time: b.start_time.toISOString(),
        end_time: b.end_time.toISOString(),
      },
    }));
}

/** All events of the asked types, newest first (ties by id, so pages are stable). */
export async function timelineEvents(db: Queryable, q: TimelineQuery): Promise<TimelineEvent[]> {
  const events = (await Promise.all(EVENT_TYPES.filter((t) => q.types.has(t)).map((t) => SOURCES[t](db, q)))).flat();
  return events.sort((a, b) => ms(new Date(b.occurred_at)) - ms(new Date(a.occurred_at)) || a.id.localeCompare(b.id));
}
