/**
 * Which setting of a rule applies to one (connection, database): a server override for that database, else
 * the server's own override, else its cluster's, else its cluster group's, else the rule's defaults. The
 * winning level decides everything, `enabled` included (`enabled=false` there switches the rule off).
 */
import type { Override } from "../vocabulary/alert-records.ts";
import type { Operator, Severity } from "../vocabulary/builtin-rules.ts";

export interface RuleDefaults {
  id: number;
  default_operator: Operator;
  default_threshold: number;
  default_severity: Severity;
  default_enabled: boolean;
  /** Dampers (dampers.ts); absent = 0, off. */
  default_for_minutes?: number;
  default_clear_delay_minutes?: number;
}

export interface Placement {
  connectionId: number;
  clusterId: number | null;
  groupId: number | null;
}

export interface EffectiveSetting {
  operator: Operator;
  threshold: number;
  severity: Severity;
  enabled: boolean;
  for_minutes: number;
  clear_delay_minutes: number;
  source: "server_database" | "server" | "cluster" | "group" | "default";
}

export function effectiveSetting(rule: RuleDefaults, overrides: readonly Override[], where: Placement, database: string): EffectiveSetting {
  const mine = overrides.filter((o) => o.rule_id === rule.id);
  const find = (scope: Override["scope"], id: number | null, db = "") =>
    id === null ? undefined : mine.find((o) => o.scope === scope && o.scope_id === id && o.database_name === db);
  const candidates: Array<[EffectiveSetting["source"], Override | undefined]> = [
    ["server_database", database ? find("server", where.connectionId, database) : undefined],
    ["server", find("server", where.connectionId)],
    ["cluster", find("cluster", where.clusterId)],
    ["group", find("group", where.groupId)],
  ];
  const forMinutes = rule.default_for_minutes ?? 0;
  const clearDelay = rule.default_clear_delay_minutes ?? 0;
  for (const [source, o] of candidates) {
    if (o)
      return {
        operator: o.operator,
        threshold: o.threshold,
        severity: o.severity,
        enabled: o.enabled,
        for_minutes: o.for_minutes ?? forMinutes,
        clear_delay_minutes: o.clear_delay_minutes ?? clearDelay,
        source,
      };
  }
  return {
    operator: rule.default_operator,
    threshold: rule.default_threshold,
    severity: rule.default_severity,
    enabled: rule.default_enabled,
    for_minutes: forMinutes,
    clear_delay_minutes: clearDelay,
    source: "default",
  };
}

export function violates(value: number, operator: Operator, threshold: number): boolean {
  switch (operator) {
    case ">":
      return value > threshold;
    case ">=":
      return value >= threshold;
    case "<":
      return value < threshold;
    case "<=":
      return value <= threshold;
    case "==":
      return value === threshold;
    case "!=":
      return value !== threshold;
  }
}
