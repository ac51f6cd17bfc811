import { PART_FACTS, entityCellsTableName, entityGaugeColumns, factColumn, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * The entity cells of probes that keep no running facts over 5-minute parts (ProbeDefinition.gaugeParts,
 * pg_stat_statements) lose those columns. Dropping a column rewrites nothing: the bytes of the cells already
 * written go with their week, at retention. A datastore made since has no such columns (migration 26 adds none).
 */
function withoutParts(probe: ProbeDefinition): string[] {
  if (probe.gaugeParts !== false) return [];
  const dropped = entityGaugeColumns(probe).flatMap((c) => PART_FACTS.map((f) => `DROP COLUMN IF EXISTS ${factColumn(c.name, f)}`));
  return dropped.length ? [`ALTER TABLE ${probeTable(entityCellsTableName(probe.name))} ${dropped.join(", ")}`] : [];
}

export const migration: Migration = {
  version: 46,
  name: "statement_cells_without_parts",
  statements: probesAt(46).flatMap(withoutParts),
};
