import { createChangeCellsTable, createLevelsTable } from "../../probes/ddl.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Time rollups of level columns and of per-sample changes (5 minutes and 1 hour per connection), kept by the
 * sample writer. Samples stored before this migration have none: `levels_from` marks, per existing
 * connection, the hour from which every cell is complete (a little after now, past the writer's clock-skew
 * allowance); queries read raw rows before it. Connections added later are covered from their first sample.
 */
export const migration: Migration = {
  version: 23,
  name: "level_rollups",
  forProbes: (probes) => [...probes.flatMap(createLevelsTable), ...probes.flatMap(createChangeCellsTable)],
  statements: [
    ...probesAt(23).flatMap(createLevelsTable),
    ...probesAt(23).flatMap(createChangeCellsTable),
    "ALTER TABLE connections ADD COLUMN levels_from timestamptz",
    "UPDATE connections SET levels_from = date_trunc('hour', now() + interval '5 minutes') + interval '1 hour'",
  ],
};
