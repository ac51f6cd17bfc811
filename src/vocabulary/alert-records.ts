/**
 * The shapes of stored alerts and alert overrides, shared by the datastore's repositories and the alerter's pure
 * core (evaluate-round.ts, effective-setting.ts), so neither layer reaches into the other for them.
 */
import type { Operator, Severity } from "./builtin-rules.ts";

export type AlertType = "threshold" | "anomaly" | "connection";

export interface AlertKey {
  alert_type: AlertType;
  rule_id: number | null;
  metric_name: string;
  connection_id: number;
  database_name: string;
  object_name: string;
}

export interface OpenAlert extends AlertKey {
  id: number;
  status: "pending" | "active" | "acknowledged";
  severity: Severity;
  description: string;
  pending_since?: Date | null;
  clearing_since?: Date | null;
}

export interface NewAlert extends AlertKey {
  metric_value: number | null;
  threshold_value: number | null;
  operator: Operator | null;
  severity: Severity;
  title: string;
  description: string;
  anomaly_score?: number;
  anomaly_details?: Record<string, unknown>;
  /** pending: its rule's `for` has not passed yet; not notified until it becomes active. */
  status: "pending" | "active";
}

export interface AlertUpdate {
  id: number;
  metric_value: number | null;
  threshold_value: number | null;
  operator: Operator | null;
  severity: Severity;
  description: string;
  anomaly_score?: number;
  anomaly_details?: Record<string, unknown>;
  /** An acknowledged alert whose severity changed: active again, acknowledgments dropped. */
  reactivate: boolean;
  /** A pending alert whose `for` has passed: active now, and notified. */
  activate?: boolean;
  /** Firing again while its clear delay ran: the delay starts over next time. */
  resetClearing?: boolean;
}

/** One open alert per key: the datastore's unique index holds the same columns. */
export const alertKey = (k: AlertKey) => JSON.stringify([k.alert_type, k.rule_id ?? 0, k.metric_name, k.connection_id, k.database_name, k.object_name]);

export interface Override {
  rule_id: number;
  scope: "server" | "cluster" | "group";
  scope_id: number;
  /** Server overrides only; '' = every database. */
  database_name: string;
  operator: Operator;
  threshold: number;
  severity: Severity;
  enabled: boolean;
  /** null or absent: the rule's own value. */
  for_minutes?: number | null;
  clear_delay_minutes?: number | null;
}
