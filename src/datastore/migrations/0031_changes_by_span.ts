import { changesTableName, createIrregularTable, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * The few changes of another length than the collection interval (a missed round, a late one) are found by
 * index: the spaced read lists them (changes-repository.ts spacedChangesSql), where it scanned every change of
 * the window (3.6 of 8 ms of a month's filtered counter in the lab). Keyed on the span in seconds, a double (an
 * interval key is twice as wide): about 1.7 bytes a sample row of pg_stat_database with 20 databases.
 */
export const migration: Migration = {
  version: 31,
  name: "changes_by_span",
  statements: forProbes(probesAt(31)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return probes
    .filter((p) => createIrregularTable(p).length > 0)
    .map(
      (p) =>
        `CREATE INDEX IF NOT EXISTS ${p.name}__changes_by_span ON ${probeTable(changesTableName(p.name))} (connection_id, date_part('epoch', collected_at - prev_collected_at))`,
    );
}
