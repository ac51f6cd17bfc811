import { PART_EXTREME_FACTS, PART_FACT_TYPES, entityCellsTableName, factColumn, partGaugeColumns, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Entity cells keep each 5-minute part's extremes and the running latest value beside the running counts and sums,
 * so a bucket edge that cuts an hour leaves at most a 5-minute part to read raw for `aggregation=min|max|last` too.
 * Cells written before have none (null): readers take them as incomplete for those aggregations and read raw rows.
 * A datastore made since has the columns already (migrations 24 and 26 make every part fact), hence IF NOT EXISTS.
 */
function withPartExtremes(probe: ProbeDefinition): string[] {
  const added = partGaugeColumns(probe).flatMap((c) =>
    PART_EXTREME_FACTS.map((f) => `ADD COLUMN IF NOT EXISTS ${factColumn(c.name, f)} ${PART_FACT_TYPES[f]}`),
  );
  return added.length ? [`ALTER TABLE IF EXISTS ${probeTable(entityCellsTableName(probe.name))} ${added.join(", ")}`] : [];
}

export const migration: Migration = {
  version: 47,
  name: "entity_part_extremes",
  statements: probesAt(47).flatMap(withPartExtremes),
};
