import { changesTableName, probeTable, recordedGaugeColumns, recordedGaugeFactColumns } from "../../probes/ddl.ts";
import type { ProbeDefinition } from "../../probes/types.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Each row of changes keeps its sample's count and sum of every integer gauge's values (probes/ddl.ts
 * recordedGaugeColumns): a gauge over every entity (numbackends over every database) in buckets too narrow for
 * the rollups reads a row a sample rather than a row per entity and sample. About 0.6 bytes a sample row of
 * pg_stat_database with 20 databases. A datastore created at version 33 or later already has the columns (hence IF
 * NOT EXISTS). Rows written before have none (null): such a window is reduced from raw rows.
 */
export const migration: Migration = {
  version: 33,
  name: "recorded_gauges",
  statements: forProbes(probesAt(33)),
  forProbes,
};

function forProbes(probes: readonly ProbeDefinition[]): string[] {
  return probes
    .filter((p) => recordedGaugeColumns(p).length > 0)
    .map(
      (p) =>
        `ALTER TABLE ${probeTable(changesTableName(p.name))} ${recordedGaugeFactColumns(p)
          .map((c) => `ADD COLUMN IF NOT EXISTS ${c}`)
          .join(", ")}`,
    );
}
