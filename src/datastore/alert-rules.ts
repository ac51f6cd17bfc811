/** Alert rules and their overrides in the datastore. */
import type { Queryable } from "../../drivers/types.ts";
import { SYSTEM_STATS_HOWTO, findAlertMetric } from "../vocabulary/alert-metrics.ts";
import type { Operator, Severity } from "../vocabulary/builtin-rules.ts";
import type { Override } from "../vocabulary/alert-records.ts";
import { NotFoundError } from "../errors.ts";

export interface AlertRuleRow {
  id: number;
  name: string;
  description: string;
  category: string;
  metric_name: string;
  metric_unit: string | null;
  default_operator: Operator;
  default_threshold: number;
  default_severity: Severity;
  default_enabled: boolean;
  default_for_minutes: number;
  default_clear_delay_minutes: number;
  required_extension: string | null;
  is_built_in: boolean;
  created_at: Date;
}

export interface Availability {
  available: boolean;
  unavailable_reason: string | null;
}

export const listAlertRules = (db: Queryable) => db.query<AlertRuleRow>("SELECT * FROM alert_rules ORDER BY category, name");

export async function getAlertRule(db: Queryable, id: number): Promise<AlertRuleRow> {
  const [row] = await db.query<AlertRuleRow>("SELECT * FROM alert_rules WHERE id = $1", [id]);
  if (!row) throw new NotFoundError(`alert rule ${id} not found`);
  return row;
}

export type RuleChanges = Partial<
  Pick<AlertRuleRow, "default_operator" | "default_threshold" | "default_severity" | "default_enabled" | "default_for_minutes" | "default_clear_delay_minutes">
>;

export async function updateAlertRule(db: Queryable, id: number, changes: RuleChanges): Promise<AlertRuleRow> {
  await getAlertRule(db, id);
  const [row] = await db.query<AlertRuleRow>(
    `UPDATE alert_rules SET default_operator = coalesce($2, default_operator), default_threshold = coalesce($3, default_threshold),
            default_severity = coalesce($4, default_severity), default_enabled = coalesce($5, default_enabled),
            default_for_minutes = coalesce($6, default_for_minutes), default_clear_delay_minutes = coalesce($7, default_clear_delay_minutes)
      WHERE id = $1 RETURNING *`,
    [
      id,
      changes.default_operator ?? null,
      changes.default_threshold ?? null,
      changes.default_severity ?? null,
      changes.default_enabled ?? null,
      changes.default_for_minutes ?? null,
      changes.default_clear_delay_minutes ?? null,
    ],
  );
  return row;
}

/**
 * Whether pglens can evaluate each rule: its metric must be one pglens measures, and a rule that needs an
 * extension's probe is available once some monitored server has delivered that probe.
 */
export async function ruleAvailability(db: Queryable, rules: readonly AlertRuleRow[]): Promise<Map<number, Availability>> {
  const delivered = new Set(
    (await db.query<{ probe_name: string }>("SELECT DISTINCT probe_name FROM probe_schedule WHERE last_success_at IS NOT NULL")).map((r) => r.probe_name),
  );
  const result = new Map<number, Availability>();
  for (const rule of rules) {
    const metric = findAlertMetric(rule.metric_name);
    let reason: string | null = null;
    if (!metric) reason = `pglens has no measurement called ${rule.metric_name}`;
    else if (metric.unavailable) reason = metric.unavailable;
    else if (rule.required_extension && !metric.probes.some((p) => delivered.has(p))) {
      reason = `needs the ${rule.required_extension} extension: no monitored server has delivered ${metric.probes.join(", ")} yet${
        rule.required_extension === "system_stats" ? `. ${SYSTEM_STATS_HOWTO}` : ""
      }`;
    }
    result.set(rule.id, { available: reason === null, unavailable_reason: reason });
  }
  return result;
}

export interface OverrideRow extends Override {
  updated_at: Date;
}

export const listOverrides = (db: Queryable) => db.query<OverrideRow>("SELECT * FROM alert_overrides");

export const overridesOfScope = (db: Queryable, scope: Override["scope"], scopeId: number) =>
  db.query<OverrideRow>("SELECT * FROM alert_overrides WHERE scope = $1 AND scope_id = $2 ORDER BY rule_id, database_name", [scope, scopeId]);

export async function upsertAlertOverride(db: Queryable, o: Omit<Override, "database_name"> & { database_name?: string }): Promise<void> {
  await db.query(
    `INSERT INTO alert_overrides (rule_id, scope, scope_id, database_name, operator, threshold, severity, enabled, for_minutes, clear_delay_minutes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (rule_id, scope, scope_id, database_name) DO UPDATE SET operator = $5, threshold = $6, severity = $7, enabled = $8, for_minutes = $9, clear_delay_minutes = $10, updated_at = now()`,
    [
      o.rule_id,
      o.scope,
      o.scope_id,
      o.database_name ?? "",
      o.operator,
      o.threshold,
      o.severity,
      o.enabled,
      o.for_minutes ?? null,
      o.clear_delay_minutes ?? null,
    ],
  );
}

export async function deleteAlertOverride(db: Queryable, ruleId: number, scope: Override["scope"], scopeId: number, databaseName = ""): Promise<void> {
  await db.query("DELETE FROM alert_overrides WHERE rule_id = $1 AND scope = $2 AND scope_id = $3 AND database_name = $4", [
    ruleId,
    scope,
    scopeId,
    databaseName,
  ]);
}
