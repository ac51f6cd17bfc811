/**
 * What happened to the demo server in its generated day, so the console shows every kind of thing on a first
 * start: an alert that fired and cleared (the collector's outage), one still open (dead rows on cart_items), and a
 * maintenance window. The configuration change and the restart are in the samples (demo-history.ts). Written
 * straight to the datastore: no notification goes out for history.
 */
import type { Queryable } from "../../drivers/types.ts";
import { DEMO_TIMES } from "./demo-history.ts";

export async function loadDemoEvents(db: Queryable, connectionId: number, now = Date.now()): Promise<void> {
  const t = DEMO_TIMES(now);
  const rule = async (name: string) => (await db.query<{ id: number }>("SELECT id FROM alert_rules WHERE name = $1", [name]))[0]?.id ?? null;
  await db.query(
    `INSERT INTO alerts (alert_type, connection_id, severity, title, description, status, triggered_at, cleared_at, clear_reason, last_updated)
     VALUES ('connection', $1, 'critical', 'Server unreachable', 'The collector could not connect: connection timed out', 'cleared', $2, $3, 'the server is reachable again', $3)`,
    [connectionId, new Date(t.outage[0] + 120_000), new Date(t.outage[1])],
  );
  await db.query(
    `INSERT INTO alerts (alert_type, rule_id, connection_id, database_name, object_name, probe_name, metric_name, metric_value, threshold_value, operator, severity, title, description, status, triggered_at, last_updated)
     VALUES ('threshold', $2, $1, 'shop', 'public.cart_items', 'pg_stat_all_tables', 'pg_stat_all_tables.dead_tuple_percent', 24.6, 20, '>', 'warning',
             'Dead rows on shop public.cart_items', 'A table holds a high share of dead rows', 'active', $3, $3)`,
    [connectionId, await rule("dead_tuple_ratio"), new Date(t.deadRows)],
  );
  await db.query(
    "INSERT INTO blackouts (scope, connection_id, reason, start_time, end_time, created_by) VALUES ('server', $1, 'Planned index rebuild on orders', $2, $3, 'demo')",
    [connectionId, new Date(t.blackout[0]), new Date(t.blackout[1])],
  );
}
