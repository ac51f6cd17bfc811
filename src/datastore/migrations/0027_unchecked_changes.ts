import { changesTableName, createIrregularTable, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Whether any sample in a range was written before the writer recorded irregular intervals (entities_checked,
 * migration 17) becomes an index probe: the partial index holds only those old samples, so it stays about empty.
 */
export const migration: Migration = {
  version: 27,
  name: "unchecked_changes",
  statements: forProbes(probesAt(27)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return probes
    .filter((p) => createIrregularTable(p).length > 0)
    .map(
      (p) =>
        `CREATE INDEX IF NOT EXISTS ${p.name}__changes_unchecked ON ${probeTable(changesTableName(p.name))} (connection_id, collected_at) WHERE entities_checked IS NOT TRUE`,
    );
}
