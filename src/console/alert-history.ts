/** An alert's story for its page: its rule, every acknowledgment, and the earlier alerts of the same kind on the same object. */
import type { Queryable } from "../../drivers/types.ts";
import type { AlertRow } from "../datastore/alerts.ts";

export interface AlertHistory {
  rule: { name: string; description: string } | null;
  acknowledgments: Array<{ acknowledged_by: string; acknowledged_at: Date; message: string; false_positive: boolean }>;
  earlier: Array<{ id: number; triggered_at: Date; cleared_at: Date | null; clear_reason: string | null }>;
}

const EARLIER_LIMIT = 10;

export async function alertHistory(db: Queryable, a: AlertRow): Promise<AlertHistory> {
  const [rules, acknowledgments, earlier] = await Promise.all([
    a.rule_id === null
      ? Promise.resolve([])
      : db.query<{ name: string; description: string }>("SELECT name, description FROM alert_rules WHERE id = $1", [a.rule_id]),
    db.query<AlertHistory["acknowledgments"][number]>(
      "SELECT acknowledged_by, acknowledged_at, message, false_positive FROM alert_acknowledgments WHERE alert_id = $1 ORDER BY acknowledged_at, id",
      [a.id],
    ),
    db.query<AlertHistory["earlier"][number]>(
      `SELECT id::int AS id, triggered_at, cleared_at, clear_reason FROM alerts
        WHERE connection_id = $1 AND alert_type = $2 AND coalesce(rule_id, 0) = coalesce($3::int, 0) AND metric_name = $4 AND database_name = $5 AND object_name = $6 AND id <> $7
        ORDER BY triggered_at DESC LIMIT ${EARLIER_LIMIT}`,
      [a.connection_id, a.alert_type, a.rule_id, a.metric_name, a.database_name, a.object_name, a.id],
    ),
  ]);
  return { rule: rules[0] ?? null, acknowledgments, earlier };
}
