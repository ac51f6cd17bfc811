/** Alerts and acknowledgments in the datastore: what the alerter writes and the API reads. */
import type { Driver, Queryable } from "../../drivers/types.ts";
import { type AlertUpdate, type NewAlert, type OpenAlert, alertKey } from "../vocabulary/alert-records.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import { findProbe } from "../probes/index.ts";
import { findAlertMetric } from "../vocabulary/alert-metrics.ts";

/** The probe an alert's metric is read from: the rule metric's probe, or the probe an anomaly's `probe.metric` names. */
export function probeOfMetric(metricName: string): string | null {
  const probe = findAlertMetric(metricName)?.probes[0] ?? metricName.split(".")[0];
  return probe && findProbe(probe) ? probe : null;
}

const KEY_COLUMNS = "alert_type, coalesce(rule_id, 0), metric_name, connection_id, database_name, object_name";

export const openAlerts = (db: Queryable) =>
  db.query<OpenAlert>(
    "SELECT id::int AS id, alert_type, rule_id, metric_name, connection_id, database_name, object_name, status, severity, description, pending_since, clearing_since FROM alerts WHERE cleared_at IS NULL",
  );

/** Keys of alerts cleared within the last `seconds`: no new alert for them yet (cooldown). */
export async function recentlyClearedKeys(db: Queryable, seconds: number): Promise<Set<string>> {
  const rows = await db.query<Parameters<typeof alertKey>[0]>(
    "SELECT alert_type, rule_id, metric_name, connection_id, database_name, object_name FROM alerts WHERE cleared_at > now() - make_interval(secs => $1)",
    [seconds],
  );
  return new Set(rows.map(alertKey));
}

/**
 * The correlation group a new alert on connection $4 joins: that of the earliest alert raised on the same server,
 * or on a server of its cluster, within the last $17 seconds; NULL (a group of its own) when there is none.
 */
const CORRELATION = `(SELECT o.correlation_id FROM alerts o JOIN connections oc ON oc.id = o.connection_id
   WHERE $17::int > 0 AND o.triggered_at > now() - make_interval(secs => $17::int)
     AND (o.connection_id = $4 OR (oc.cluster_id IS NOT NULL AND oc.cluster_id = (SELECT cluster_id FROM connections WHERE id = $4)))
   ORDER BY o.triggered_at, o.id LIMIT 1)`;

/**
 * Inserts new alerts (active, or pending while their rule's `for` runs). The partial unique index (one open alert
 * per key) settles races between alerters: a second insert for a key is dropped. The cooldown is checked again
 * here, against what is stored now. Each joins the correlation group of alerts raised on its server or cluster
 * within `correlationWindowSeconds` (0: none). Answers the ids inserted, with their status.
 */
export async function raiseAlerts(
  db: Queryable,
  alerts: readonly NewAlert[],
  cooldownSeconds: number,
  correlationWindowSeconds = 0,
): Promise<Array<{ id: number; status: "pending" | "active" }>> {
  const raised: Array<{ id: number; status: "pending" | "active" }> = [];
  for (const a of alerts) {
    const rows = await db.query<{ id: number }>(
      `INSERT INTO alerts (alert_type, rule_id, metric_name, connection_id, database_name, object_name, metric_value, threshold_value, operator, severity, title, description, anomaly_score, anomaly_details, status, pending_since, probe_name, correlation_id)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $14, $15::jsonb, $16, CASE WHEN $16 = 'pending' THEN now() END, $18, ${CORRELATION}
        WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE alert_type = $1 AND coalesce(rule_id, 0) = coalesce($2::int, 0) AND metric_name = $3 AND connection_id = $4
                            AND database_name = $5 AND object_name = $6 AND cleared_at > now() - make_interval(secs => $13))
       ON CONFLICT (${KEY_COLUMNS}) WHERE cleared_at IS NULL DO NOTHING
       RETURNING id::int AS id`,
      [
        a.alert_type,
        a.rule_id,
        a.metric_name,
        a.connection_id,
        a.database_name,
        a.object_name,
        a.metric_value,
        a.threshold_value,
        a.operator,
        a.severity,
        a.title,
        a.description,
        cooldownSeconds,
        a.anomaly_score ?? null,
        a.anomaly_details ? JSON.stringify(a.anomaly_details) : null,
        a.status,
        correlationWindowSeconds,
        probeOfMetric(a.metric_name),
      ],
    );
    raised.push(...rows.map((r) => ({ id: r.id, status: a.status })));
  }
  return raised;
}

/** Starts the clear delay of alerts whose condition stopped (from `since`, epoch ms), where it is not running yet. */
export async function startClearing(db: Queryable, clearing: ReadonlyArray<{ id: number; since: number }>): Promise<void> {
  if (clearing.length === 0) return;
  await db.query(
    `UPDATE alerts a SET clearing_since = to_timestamp(c.since / 1000.0) FROM unnest($1::bigint[], $2::float8[]) AS c(id, since)
      WHERE a.id = c.id AND a.cleared_at IS NULL AND a.clearing_since IS NULL`,
    [clearing.map((c) => c.id), clearing.map((c) => c.since)],
  );
}

/** Applies updates; returns the alerts that fire again (acknowledged -> active) or for the first time (pending -> active), with their fire count. */
export async function updateAlerts(db: Driver, updates: readonly AlertUpdate[]): Promise<Array<{ id: number; fire_count: number }>> {
  if (updates.length === 0) return [];
  // The last update of each alert, in id order: the order rows are locked in, so that racing alerters wait for
  // each other instead of deadlocking.
  const byId = [...new Map(updates.map((u) => [u.id, u])).values()].sort((a, b) => a.id - b.id);
  const column = <T>(pick: (u: AlertUpdate) => T) => byId.map(pick);
  return db.transaction(async (tx) => {
    const ids = column((u) => u.id);
    await tx.query("SELECT id FROM alerts WHERE id = ANY($1::bigint[]) AND cleared_at IS NULL ORDER BY id FOR UPDATE", [ids]);
    // Every open alert is refreshed each round: one statement for all, not a transaction apiece (3,000 round trips at 1,000 alerts).
    await tx.query(
      `UPDATE alerts a SET metric_value = u.metric_value, threshold_value = u.threshold_value, operator = u.operator, severity = u.severity,
              description = u.description, last_updated = now(),
              anomaly_score = coalesce(u.anomaly_score, a.anomaly_score), anomaly_details = coalesce(u.anomaly_details::jsonb, a.anomaly_details),
              clearing_since = CASE WHEN u.reset_clearing THEN NULL ELSE a.clearing_since END
         FROM unnest($1::bigint[], $2::float8[], $3::float8[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::boolean[])
              AS u(id, metric_value, threshold_value, operator, severity, description, anomaly_score, anomaly_details, reset_clearing)
        WHERE a.id = u.id AND a.cleared_at IS NULL`,
      [
        ids,
        column((u) => u.metric_value),
        column((u) => u.threshold_value),
        column((u) => u.operator),
        column((u) => u.severity),
        column((u) => u.description),
        column((u) => u.anomaly_score ?? null),
        column((u) => (u.anomaly_details ? JSON.stringify(u.anomaly_details) : null)),
        column((u) => u.resetClearing ?? false),
      ],
    );
    const reactivated: Array<{ id: number; fire_count: number }> = [];
    for (const u of byId) {
      if (u.activate) {
        // Only the alerter that actually flips it reports it, so it is notified once.
        const [row] = await tx.query<{ id: number; fire_count: number }>(
          "UPDATE alerts SET status = 'active', pending_since = NULL WHERE id = $1 AND status = 'pending' RETURNING id::int AS id, fire_count",
          [u.id],
        );
        if (row) reactivated.push(row);
        continue;
      }
      if (!u.reactivate) continue;
      // Only the alerter that actually flips it back reports it, so it is notified once.
      const [row] = await tx.query<{ id: number; fire_count: number }>(
        "UPDATE alerts SET status = 'active', fire_count = fire_count + 1 WHERE id = $1 AND status = 'acknowledged' RETURNING id::int AS id, fire_count",
        [u.id],
      );
      if (!row) continue;
      await tx.query("DELETE FROM alert_acknowledgments WHERE alert_id = $1", [u.id]);
      reactivated.push(row);
    }
    return reactivated;
  });
}

/** Clears alerts, recording why and the value that cleared them; answers the ids this call cleared. */
export async function clearAlerts(db: Queryable, cleared: ReadonlyArray<{ id: number; reason: string; value: number | null }>): Promise<number[]> {
  if (cleared.length === 0) return [];
  const rows = await db.query<{ id: number }>(
    `UPDATE alerts a SET status = 'cleared', cleared_at = now(), last_updated = now(), clear_reason = c.reason, clear_value = c.value
       FROM unnest($1::bigint[], $2::text[], $3::float8[]) AS c(id, reason, value)
      WHERE a.id = c.id AND a.cleared_at IS NULL RETURNING a.id::int AS id`,
    [cleared.map((c) => c.id), cleared.map((c) => c.reason), cleared.map((c) => c.value)],
  );
  return rows.map((r) => r.id);
}

/** Deletes alerts cleared, or acknowledged and untouched since, more than `days` ago. */
export async function deleteOldAlerts(db: Queryable, days: number): Promise<number> {
  const rows = await db.query(
    `DELETE FROM alerts WHERE (status = 'cleared' AND cleared_at < now() - make_interval(days => $1))
        OR (status = 'acknowledged' AND last_updated < now() - make_interval(days => $1)) RETURNING id`,
    [days],
  );
  return rows.length;
}

export interface AlertFilters {
  connectionIds: readonly number[];
  status?: string;
  excludeCleared?: boolean;
  severity?: string;
  alertType?: string;
  correlationId?: number;
  startTime?: Date;
  endTime?: Date;
  limit: number;
  offset: number;
}

function whereOf(f: AlertFilters): { where: string; params: unknown[] } {
  const params: unknown[] = [f.connectionIds];
  const clauses = ["a.connection_id = ANY($1::int[])"];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    clauses.push(sql.replace("?", `$${params.length}`));
  };
  if (f.status) add("a.status = ?", f.status);
  if (f.excludeCleared) clauses.push("a.cleared_at IS NULL");
  if (f.severity) add("a.severity = ?", f.severity);
  if (f.alertType) add("a.alert_type = ?", f.alertType);
  if (f.correlationId !== undefined) add("a.correlation_id = ?", f.correlationId);
  if (f.startTime) add("a.triggered_at >= ?", f.startTime.toISOString());
  if (f.endTime) add("a.triggered_at <= ?", f.endTime.toISOString());
  return { where: clauses.join(" AND "), params };
}

const ALERT_SELECT = `SELECT a.id::int AS id, a.correlation_id::int AS correlation_id, a.alert_type, a.rule_id, a.connection_id, a.database_name, a.object_name, a.probe_name, a.metric_name, a.metric_value,
        r.metric_unit, a.threshold_value, a.operator, a.severity, a.title, a.description, a.status, a.triggered_at, a.cleared_at, a.clear_reason, a.clear_value, a.last_updated,
        a.anomaly_score, a.anomaly_details, a.ai_analysis, a.ai_analysis_metric_value, coalesce(c.name, 'Unknown') AS server_name,
        ack.acknowledged_at, ack.acknowledged_by, ack.message AS ack_message, ack.false_positive
   FROM alerts a
   LEFT JOIN alert_rules r ON r.id = a.rule_id
   LEFT JOIN connections c ON c.id = a.connection_id
   LEFT JOIN LATERAL (SELECT * FROM alert_acknowledgments k WHERE k.alert_id = a.id ORDER BY k.acknowledged_at DESC, k.id DESC LIMIT 1) ack ON true`;

export type AlertRow = Record<string, unknown> & { id: number; connection_id: number; status: string };

export async function listAlerts(db: Queryable, f: AlertFilters): Promise<{ alerts: AlertRow[]; total: number }> {
  const { where, params } = whereOf(f);
  const [{ total }] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM alerts a WHERE ${where}`, params);
  const alerts = await db.query<AlertRow>(`${ALERT_SELECT} WHERE ${where} ORDER BY a.triggered_at DESC, a.id DESC LIMIT ${f.limit} OFFSET ${f.offset}`, params);
  return { alerts, total };
}

export async function getAlert(db: Queryable, id: number): Promise<AlertRow> {
  const [row] = await db.query<AlertRow>(`${ALERT_SELECT} WHERE a.id = $1`, [id]);
  if (!row) throw new NotFoundError(`alert ${id} not found`);
  return row;
}

/** "severity: title" of a connection's open alerts, newest first. */
export async function openAlertTitles(db: Queryable, connectionId: number, limit = 20): Promise<string[]> {
  const rows = await db.query<{ line: string }>(
    "SELECT severity || ': ' || title AS line FROM alerts WHERE connection_id = $1 AND cleared_at IS NULL ORDER BY triggered_at DESC LIMIT $2",
    [connectionId, limit],
  );
  return rows.map((r) => r.line);
}

export async function activeAlertCounts(db: Queryable, connectionIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await db.query<{ connection_id: number; n: number }>(
    "SELECT connection_id, count(*)::int AS n FROM alerts WHERE status = 'active' AND connection_id = ANY($1::int[]) GROUP BY connection_id ORDER BY connection_id",
    [connectionIds],
  );
  return new Map(rows.map((r) => [r.connection_id, r.n]));
}

export async function acknowledgeAlert(db: Driver, id: number, by: string, message: string, falsePositive: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx.query("UPDATE alerts SET status = 'acknowledged', last_updated = now() WHERE id = $1 AND status = 'active' RETURNING id", [id]);
    if (rows.length === 0) throw new ConflictError(`alert ${id} is not active; only an active alert can be acknowledged`);
    await tx.query("INSERT INTO alert_acknowledgments (alert_id, acknowledged_by, message, false_positive) VALUES ($1, $2, $3, $4)", [
      id,
      by,
      message,
      falsePositive,
    ]);
  });
}

export async function unacknowledgeAlert(db: Driver, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx.query("UPDATE alerts SET status = 'active', last_updated = now() WHERE id = $1 AND status = 'acknowledged' RETURNING id", [id]);
    if (rows.length === 0) throw new ConflictError(`alert ${id} is not acknowledged`);
    await tx.query("DELETE FROM alert_acknowledgments WHERE alert_id = $1", [id]);
  });
}

export async function saveAnalysis(db: Queryable, id: number, analysis: string, metricValue: number | null): Promise<void> {
  await db.query("UPDATE alerts SET ai_analysis = $2, ai_analysis_metric_value = $3 WHERE id = $1", [id, analysis, metricValue]);
}
