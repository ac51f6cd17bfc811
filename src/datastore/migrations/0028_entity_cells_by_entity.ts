import { createEntityCellsTable, entityCellsTableName, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * A filter naming one entity reads its hourly cells by index (a month of one database's cells: a seq scan of
 * every entity's, 3.4 ms, became 0.6 ms in the lab). An entity cell is an hour of one entity, so the index is
 * small beside the raw rows.
 */
export const migration: Migration = {
  version: 28,
  name: "entity_cells_by_entity",
  statements: forProbes(probesAt(28)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return probes
    .filter((p) => createEntityCellsTable(p).length > 0)
    .map(
      (p) => `CREATE INDEX IF NOT EXISTS ${p.name}__entity_cells_by_entity ON ${probeTable(entityCellsTableName(p.name))} (connection_id, entity, cell_start)`,
    );
}
