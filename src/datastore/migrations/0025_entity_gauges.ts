import { entityCellsTableName, entityGaugeLevelFactColumns, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Entity cells keep the level facts of gauges too (a database's numbackends, a table's n_dead_tup), so a filter
 * naming one entity reads them over long windows. Cells written before have none (null): readers take such a
 * cell as incomplete and read raw rows, so `levels_from` stays where it is. A datastore created at version 24
 * or later already has the columns (the catalogue creates them), hence IF NOT EXISTS.
 */
export const migration: Migration = {
  version: 25,
  name: "entity_gauges",
  statements: forProbes(probesAt(25)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return probes.flatMap((probe) => {
    const columns = entityGaugeLevelFactColumns(probe);
    return columns.length === 0
      ? []
      : [`ALTER TABLE IF EXISTS ${probeTable(entityCellsTableName(probe.name))} ${columns.map((c) => `ADD COLUMN IF NOT EXISTS ${c}`).join(", ")}`];
  });
}
