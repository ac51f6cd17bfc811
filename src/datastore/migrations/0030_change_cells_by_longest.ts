import { changeCellsTableName, createChangeCellsTable, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * The few cells holding a long interval (a collector stopped for a while) are found by index: a counter query's,
 * longer than it can read from cells, in the statement that reads the rest (samples/series-from-change-cells.ts), instead of
 * scanning every cell of the window a second time; and the spacing bounds' hours with intervals longer than the
 * collection interval (changes-repository.ts sampleBounds). Cells are 13 rows an hour per connection: the index is
 * small.
 */
export const migration: Migration = {
  version: 30,
  name: "change_cells_by_longest",
  statements: forProbes(probesAt(30)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return probes
    .filter((p) => createChangeCellsTable(p).length > 0)
    .map((p) => `CREATE INDEX IF NOT EXISTS ${p.name}__change_cells_by_longest ON ${probeTable(changeCellsTableName(p.name))} (connection_id, max_span_ms)`);
}
