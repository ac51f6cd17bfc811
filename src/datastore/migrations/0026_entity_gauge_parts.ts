import { entityCellsTableName, entityGaugePartFactColumns, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Entity cells keep running facts of their gauges over the hour's 5-minute parts, so a bucket edge that cuts an
 * hour reads at most a 5-minute part raw. Cells written before have none (null): readers take such a cell as
 * incomplete and read raw rows. A datastore created at version 25 or later already has the columns, hence IF NOT EXISTS.
 */
export const migration: Migration = {
  version: 26,
  name: "entity_gauge_parts",
  statements: forProbes(probesAt(26)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return probes.flatMap((probe) => {
    const columns = entityGaugePartFactColumns(probe);
    return columns.length === 0
      ? []
      : [`ALTER TABLE IF EXISTS ${probeTable(entityCellsTableName(probe.name))} ${columns.map((c) => `ADD COLUMN IF NOT EXISTS ${c}`).join(", ")}`];
  });
}
