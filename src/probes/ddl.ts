/** The datastore DDL generated from the catalogue: one partitioned table per probe and its global config row. */
import { PROBES } from "./index.ts";
import type { ProbeDefinition } from "./types.ts";

export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;
export const probeTable = (probe: string) => `metrics.${quoteIdent(probe)}`;

export function createProbeTable(probe: ProbeDefinition): string[] {
  const keys = new Set(probe.keys);
  const columns = [
    `connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE`,
    `collected_at timestamptz NOT NULL`,
    ...probe.columns.map((c) => `${quoteIdent(c.name)} ${c.type}${keys.has(c.name) ? " NOT NULL" : ""}`),
  ];
  const primaryKey = ["connection_id", "collected_at", ...probe.keys].map(quoteIdent).join(", ");
  return [
    `CREATE TABLE ${probeTable(probe.name)} (\n  ${columns.join(",\n  ")},\n  PRIMARY KEY (${primaryKey})\n) PARTITION BY RANGE (collected_at)`,
    `COMMENT ON TABLE ${probeTable(probe.name)} IS ${quoteLiteral(probe.description)}`,
    ...probe.columns.map((c) => `COMMENT ON COLUMN ${probeTable(probe.name)}.${quoteIdent(c.name)} IS ${quoteLiteral(c.description)}`),
  ];
}

export function seedGlobalConfig(probe: ProbeDefinition): string {
  return `INSERT INTO probe_configs (probe_name, scope, collection_interval_seconds, retention_days)
    VALUES (${quoteLiteral(probe.name)}, 'global', ${probe.defaultIntervalSeconds}, ${probe.defaultRetentionDays})
    ON CONFLICT DO NOTHING`;
}

/** Every statement that creates the catalogue's tables as they stand today. */
export function catalogueStatements(probes: readonly ProbeDefinition[] = PROBES): string[] {
  return probes.flatMap((p) => [...createProbeTable(p), seedGlobalConfig(p)]);
}
