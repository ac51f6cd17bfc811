import { changesTableName, createIrregularTable, probeTable } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Counter windows by difference (samples/read-by-difference.ts): each multi-entity probe's irregular entity
 * intervals, and per sample whether the writer recorded them (samples written before this migration were not,
 * and are answered from raw rows). Statements get an index by queryid for one statement's history.
 */
const forProbes = (probes: readonly ProbeDefinition[]) => [
  ...probes.flatMap(createIrregularTable),
  ...probes
    .filter((p) => createIrregularTable(p).length > 0)
    .map((p) => `ALTER TABLE ${probeTable(changesTableName(p.name))} ADD COLUMN entities_checked boolean`),
];

export const migration: Migration = {
  version: 17,
  name: "irregular_intervals",
  forProbes,
  statements: [
    ...forProbes(probesAt(17)),
    `CREATE INDEX pg_stat_statements_by_queryid ON ${probeTable("pg_stat_statements")} (connection_id, queryid, collected_at)`,
  ],
};
