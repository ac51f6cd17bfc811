import { pgSysCpuUsageInfo } from "../../probes/pg_sys_cpu_usage_info.ts";
import { pgTableBloat } from "../../probes/pg_table_bloat.ts";
import { migration as catalogue } from "./0002_probe_catalogue.ts";
import { migration as sampleChanges } from "./0003_sample_changes.ts";
import { migration as irregularIntervals } from "./0017_irregular_intervals.ts";
import { migration as levelRollups } from "./0023_level_rollups.ts";
import { migration as entityCells } from "./0024_entity_cells.ts";
import { migration as entityGauges } from "./0025_entity_gauges.ts";
import { migration as entityGaugeParts } from "./0026_entity_gauge_parts.ts";
import { migration as uncheckedChanges } from "./0027_unchecked_changes.ts";
import { migration as entityCellsByEntity } from "./0028_entity_cells_by_entity.ts";
import { migration as changeCellsByLongest } from "./0030_change_cells_by_longest.ts";
import { migration as changesBySpan } from "./0031_changes_by_span.ts";
import { migration as changesFoundByCells } from "./0032_changes_found_by_cells.ts";
import { migration as recordedGauges } from "./0033_recorded_gauges.ts";
import { migration as compressedHistory } from "./0040_compressed_history.ts";
import { replayFor } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Two probes join the catalogue, their tables built as every probe's were: pg_table_bloat (table_bloat_ratio's
 * measurement) and pg_sys_cpu_usage_info (cpu_usage_high's, where system_stats is installed).
 */
export const migration: Migration = {
  version: 43,
  name: "table_bloat_probe",
  statements: replayFor(
    [
      catalogue,
      sampleChanges,
      irregularIntervals,
      levelRollups,
      entityCells,
      entityGauges,
      entityGaugeParts,
      uncheckedChanges,
      entityCellsByEntity,
      changeCellsByLongest,
      changesBySpan,
      changesFoundByCells,
      recordedGauges,
      compressedHistory,
    ],
    [pgTableBloat, pgSysCpuUsageInfo],
  ),
};
