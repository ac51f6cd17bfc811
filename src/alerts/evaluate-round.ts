/**
 * One alerter round as a pure function: rules, their overrides, the current readings of each connection,
 * the collector's connection errors and the open alerts go in; which alerts to raise, update and clear come
 * out. The I/O around it is alerter.ts.
 *
 * - A violated rule with an open (active or acknowledged) alert for its key updates that alert; an
 *   acknowledged alert whose severity changes becomes active again.
 * - A violated rule without one raises a new alert, unless the key was cleared within the cooldown.
 * - An open threshold alert whose rule is no longer violated, is disabled, or has no current value is cleared.
 * - One `connection` alert per monitored connection whose collector reports an error; cleared when it is gone.
 * - Anomalies (values far from their baseline) raise or update `anomaly` alerts, cleared once back to normal.
 * - Inside an active blackout (the connection, or one database of it) no new alert is raised; alerts already
 *   open there are still updated and cleared as usual.
 */
import type { Reading } from "../vocabulary/alert-metrics.ts";
import type { Anomaly } from "./baselines.ts";
import { type DamperState, type Dampers, damperStep } from "./dampers.ts";
import { type Placement, type RuleDefaults, effectiveSetting, violates } from "./effective-setting.ts";
import { type AlertKey, type AlertUpdate, type NewAlert, type OpenAlert, type Override, alertKey } from "../vocabulary/alert-records.ts";

export interface RoundRule extends RuleDefaults {
  name: string;
  description: string;
  metric_name: string;
  /** False when pglens does not collect the rule's data: never evaluated. */
  available: boolean;
}

export interface RoundConnection extends Placement {
  name: string;
  error: string | null;
  /** Inside an active blackout: no new alerts for it. */
  blackedOut: boolean;
  /** Databases of it inside an active server blackout narrowed to a database. */
  blackedOutDatabases?: ReadonlySet<string>;
}

/** A value far from its baseline (tier 1), already confirmed by any later tier. */
export interface AnomalyCandidate {
  connection_id: number;
  database_name: string;
  metric_name: string;
  value: number;
  anomaly: Anomaly;
  /** What tiers 2-3 found (decided_by, tier2_score, tier3_result), when they ran. */
  review?: Record<string, unknown>;
}

export interface RoundInput {
  rules: readonly RoundRule[];
  overrides: readonly Override[];
  connections: readonly RoundConnection[];
  /** Per connection, per metric name: the current readings (absent = no current value). */
  readings: ReadonlyMap<number, ReadonlyMap<string, readonly Reading[]>>;
  open: readonly OpenAlert[];
  /** Keys (alertKey) of alerts cleared within the cooldown. */
  recentlyCleared: ReadonlySet<string>;
  /** This round's anomalies; undefined when anomaly detection did not run (open anomaly alerts stay as they are). */
  anomalies?: readonly AnomalyCandidate[];
  /** The round's time (epoch ms), for the dampers. */
  now?: number;
}

/** An alert to clear, with what cleared it: told to whoever heard it fire. */
export interface ClearedAlert {
  id: number;
  reason: string;
  /** The value that cleared it, where there is one. */
  value: number | null;
  /** A pending alert that did not last: cleared without a notice (none went out for it). */
  silent?: boolean;
}

export interface RoundChanges {
  raise: NewAlert[];
  update: AlertUpdate[];
  clear: ClearedAlert[];
  /** Alerts whose condition stopped while a clear delay holds them open: the delay counts from `since` (epoch ms). */
  clearing: Array<{ id: number; since: number }>;
}

const STALENESS_METRIC = "probe_staleness_ratio";
const round = (v: number) => Number(v.toPrecision(4));
const CONNECTION_METRIC = "";

function thresholdTitle(rule: RoundRule, conn: RoundConnection, r: Reading): string {
  if (rule.metric_name === STALENESS_METRIC) return `Stale metrics: ${r.object_name} on ${conn.name}`;
  const where = [r.database_name, r.object_name].filter(Boolean).join(" / ");
  return where ? `${rule.name}: ${where}` : rule.name;
}

export function evaluateRound(input: RoundInput): RoundChanges {
  const changes: RoundChanges = { raise: [], update: [], clear: [], clearing: [] };
  const now = input.now ?? 0;
  const open = new Map(input.open.map((a) => [alertKey(a), a]));
  const stillFiring = new Set<string>();
  const byId = new Map(input.connections.map((c) => [c.connectionId, c]));
  const silenced = (key: AlertKey) => {
    const conn = byId.get(key.connection_id);
    return conn !== undefined && (conn.blackedOut || (key.database_name !== "" && (conn.blackedOutDatabases?.has(key.database_name) ?? false)));
  };

  const fire = (key: AlertKey, fields: Omit<NewAlert, keyof AlertKey | "status">, dampers: Dampers = NO_DAMPERS) => {
    const k = alertKey(key);
    stillFiring.add(k);
    const existing = open.get(k);
    const step = damperStep(existing && damperState(existing), true, dampers, now);
    if (existing) {
      const severityChanged = existing.severity !== fields.severity;
      changes.update.push({
        id: existing.id,
        metric_value: fields.metric_value,
        threshold_value: fields.threshold_value,
        operator: fields.operator,
        severity: fields.severity,
        description: fields.description,
        anomaly_score: fields.anomaly_score,
        anomaly_details: fields.anomaly_details,
        reactivate: existing.status === "acknowledged" && severityChanged,
        activate: step.kind === "activate",
        resetClearing: (existing.clearing_since ?? null) !== null,
      });
    } else if (step.kind === "raise" && !input.recentlyCleared.has(k) && !silenced(key)) changes.raise.push({ ...key, ...fields, status: step.status });
  };

  for (const conn of input.connections) {
    if (conn.error) {
      fire(
        { alert_type: "connection", rule_id: null, metric_name: CONNECTION_METRIC, connection_id: conn.connectionId, database_name: "", object_name: "" },
        { metric_value: null, threshold_value: null, operator: null, severity: "critical", title: `Connection error: ${conn.name}`, description: conn.error },
      );
    }
    const readings = input.readings.get(conn.connectionId);
    for (const rule of input.rules) {
      if (!rule.available) continue;
      // An unreachable server makes every probe stale: its connection alert says why, once.
      if (conn.error && rule.metric_name === STALENESS_METRIC) continue;
      for (const r of readings?.get(rule.metric_name) ?? []) {
        const setting = effectiveSetting(rule, input.overrides, conn, r.database_name);
        if (!setting.enabled || !violates(r.value, setting.operator, setting.threshold)) continue;
        fire(
          {
            alert_type: "threshold",
            rule_id: rule.id,
            metric_name: rule.metric_name,
            connection_id: conn.connectionId,
            database_name: r.database_name,
            object_name: r.object_name,
          },
          {
            metric_value: r.value,
            threshold_value: setting.threshold,
            operator: setting.operator,
            severity: setting.severity,
            title: thresholdTitle(rule, conn, r),
            description: rule.description,
          },
          { forMinutes: setting.for_minutes, clearDelayMinutes: setting.clear_delay_minutes },
        );
      }
    }
  }

  for (const a of input.anomalies ?? []) {
    const { z, baseline } = a.anomaly;
    const where = a.database_name ? ` (${a.database_name})` : "";
    const period =
      baseline.period_type === "all" ? "7-day" : baseline.period_type === "hourly" ? `hour-${baseline.period_value} UTC` : `weekday-${baseline.period_value}`;
    fire(
      { alert_type: "anomaly", rule_id: null, metric_name: a.metric_name, connection_id: a.connection_id, database_name: a.database_name, object_name: "" },
      {
        metric_value: a.value,
        threshold_value: null,
        operator: null,
        severity: a.anomaly.severity,
        title: `Anomaly: ${a.metric_name}${where}`,
        description: `${round(a.value)} is ${round(z)} standard deviations from its ${period} baseline (mean ${round(baseline.mean)}, stddev ${round(baseline.stddev)}, ${baseline.sample_count} samples)`,
        anomaly_score: z,
        anomaly_details: {
          z_score: z,
          baseline: {
            period_type: baseline.period_type,
            period_value: baseline.period_value,
            mean: baseline.mean,
            stddev: baseline.stddev,
            sample_count: baseline.sample_count,
          },
          ...a.review,
        },
      },
    );
  }

  // The cleaner: open alerts nothing fired for this round (anomaly alerts only when anomalies were checked).
  for (const [k, alert] of open) {
    if ((alert.alert_type === "anomaly" && !input.anomalies) || stillFiring.has(k)) continue;
    const dampers = dampersOf(alert, input);
    const step = damperStep(damperState(alert), false, dampers, now);
    if (step.kind === "drop") changes.clear.push({ id: alert.id, reason: `the condition did not last ${dampers.forMinutes} min`, value: null, silent: true });
    else if (step.kind === "clearing") {
      if ((alert.clearing_since ?? null) === null) changes.clearing.push({ id: alert.id, since: step.since });
    } else changes.clear.push({ id: alert.id, ...whyCleared(alert, input) });
  }
  return changes;
}

const NO_DAMPERS: Dampers = { forMinutes: 0, clearDelayMinutes: 0 };

const damperState = (a: OpenAlert): DamperState => ({
  status: a.status,
  pendingSince: a.pending_since?.getTime() ?? null,
  clearingSince: a.clearing_since?.getTime() ?? null,
});

/** Where a threshold alert's rule stands now: the rule, if pglens evaluates it, and its setting on the alert's server. */
function ruleNow(alert: OpenAlert, input: RoundInput) {
  const rule = input.rules.find((r) => r.id === alert.rule_id);
  const conn = input.connections.find((c) => c.connectionId === alert.connection_id);
  if (!rule || !conn) return undefined;
  return { rule, setting: effectiveSetting(rule, input.overrides, conn, alert.database_name) };
}

/** A threshold alert's dampers where it fires now (its rule's effective setting); other alerts have none. */
function dampersOf(alert: OpenAlert, input: RoundInput): Dampers {
  const now = alert.alert_type === "threshold" ? ruleNow(alert, input) : undefined;
  return now?.setting.enabled ? { forMinutes: now.setting.for_minutes, clearDelayMinutes: now.setting.clear_delay_minutes } : NO_DAMPERS;
}

/** Why an open alert nothing fired for this round clears, and the value it has now, if any. */
function whyCleared(alert: OpenAlert, input: RoundInput): Omit<ClearedAlert, "id"> {
  if (alert.alert_type === "connection") return { reason: "the server is reachable again", value: null };
  if (alert.alert_type === "anomaly") return { reason: "back within its normal range", value: null };
  const ruled = ruleNow(alert, input);
  if (!ruled?.rule.available) return { reason: "the rule is no longer evaluated", value: null };
  if (!ruled.setting.enabled) return { reason: "the rule was disabled", value: null };
  const reading = input.readings
    .get(alert.connection_id)
    ?.get(alert.metric_name)
    ?.find((r) => r.database_name === alert.database_name && r.object_name === alert.object_name);
  if (!reading) return { reason: "no current value (the data is stale or the object is gone)", value: null };
  return { reason: "back within the threshold", value: reading.value };
}
