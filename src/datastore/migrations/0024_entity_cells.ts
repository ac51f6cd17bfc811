import { createEntityCellsTable } from "../../probes/ddl.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Hourly rollups of each entity's changes, kept by the sample writer. Samples stored before have none, so
 * `levels_from` of every existing connection moves to the hour after the upgrade (no earlier than it was):
 * queries read raw rows before it, for all time rollups alike.
 */
export const migration: Migration = {
  version: 24,
  name: "entity_cells",
  forProbes: (probes) => probes.flatMap(createEntityCellsTable),
  statements: [
    ...probesAt(24).flatMap(createEntityCellsTable),
    `UPDATE connections SET levels_from = greatest(levels_from, date_trunc('hour', now() + interval '5 minutes') + interval '1 hour')`,
  ],
};
