import { changeCellsTableName, createChangeCellsTable, createIrregularTable, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * The changes of another length than the collection interval (a missed round, a late one) are found through the
 * change cells instead of migration 31's index: each cell keeps its shortest interval too, so the spaced read
 * looks only into the hours whose shortest or longest interval is another (changes-repository.ts
 * spacedChangesSql). The index cost about 1.6 bytes a sample row of pg_stat_database with 20 databases, the
 * column about 0.1. Cells written before have none (null): their hours are looked into.
 */
export const migration: Migration = {
  version: 32,
  name: "changes_found_by_cells",
  statements: forProbes(probesAt(32)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return [
    ...probes
      .filter((p) => createChangeCellsTable(p).length > 0)
      .map((p) => `ALTER TABLE ${probeTable(changeCellsTableName(p.name))} ADD COLUMN IF NOT EXISTS min_span_ms double precision`),
    ...probes.filter((p) => createIrregularTable(p).length > 0).map((p) => `DROP INDEX IF EXISTS metrics.${p.name}__changes_by_span`),
  ];
}
