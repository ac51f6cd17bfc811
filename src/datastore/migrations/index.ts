import { migration as foundation } from "./0001_foundation.ts";
import { migration as probeCatalogue } from "./0002_probe_catalogue.ts";
import { migration as sampleChanges } from "./0003_sample_changes.ts";
import { migration as auth } from "./0004_auth.ts";
import { migration as estate } from "./0005_estate.ts";
import { migration as collector } from "./0006_collector.ts";
import { migration as security } from "./0007_security.ts";
import { migration as alerting } from "./0008_alerting.ts";
import { migration as liveLogin } from "./0009_live_login.ts";
import { migration as blackouts } from "./0010_blackouts.ts";
import { migration as timelineProbes } from "./0011_timeline_probes.ts";
import { migration as notifications } from "./0012_notifications.ts";
import { migration as listConnectionsTool } from "./0013_list_connections_tool.ts";
import { migration as metricsSummaryTools } from "./0014_metrics_summary_tools.ts";
import { migration as replicationTopology } from "./0015_replication_topology.ts";
import { migration as statementWal } from "./0016_statement_wal.ts";
import { migration as irregularIntervals } from "./0017_irregular_intervals.ts";
import { migration as llmTokenUsage } from "./0018_llm_token_usage.ts";
import { migration as conversations } from "./0019_conversations.ts";
import { migration as memories } from "./0020_memories.ts";
import { migration as overviewSummaries } from "./0021_overview_summaries.ts";
import { migration as anomalyReviews } from "./0022_anomaly_reviews.ts";
import { migration as levelRollups } from "./0023_level_rollups.ts";
import { migration as entityCells } from "./0024_entity_cells.ts";
import { migration as entityGauges } from "./0025_entity_gauges.ts";
import { migration as entityGaugeParts } from "./0026_entity_gauge_parts.ts";
import { migration as uncheckedChanges } from "./0027_unchecked_changes.ts";
import { migration as entityCellsByEntity } from "./0028_entity_cells_by_entity.ts";
import { migration as probeSlots } from "./0029_probe_slots.ts";
import { migration as changeCellsByLongest } from "./0030_change_cells_by_longest.ts";
import { migration as changesBySpan } from "./0031_changes_by_span.ts";
import { migration as changesFoundByCells } from "./0032_changes_found_by_cells.ts";
import { migration as recordedGauges } from "./0033_recorded_gauges.ts";
import { migration as samplesWithoutForeignKeys } from "./0034_samples_without_foreign_keys.ts";
import { migration as channelDestinations } from "./0035_channel_destinations.ts";
import { migration as shortLeases } from "./0036_short_leases.ts";
import { migration as clearReasons } from "./0037_clear_reasons.ts";
import { migration as reachabilityChecks } from "./0038_reachability_checks.ts";
import { migration as alertDampers } from "./0039_alert_dampers.ts";
import { migration as compressedHistory } from "./0040_compressed_history.ts";
import { migration as seriesBaselineCountTools } from "./0041_series_baseline_count_tools.ts";
import { migration as alertCorrelation } from "./0042_alert_correlation.ts";
import { migration as tableBloatProbe } from "./0043_table_bloat_probe.ts";
import { migration as slowStatementsIndex } from "./0044_slow_statements_index.ts";
import { migration as compressedArraysInline } from "./0045_compressed_arrays_inline.ts";
import { migration as statementCellsWithoutParts } from "./0046_statement_cells_without_parts.ts";
import { migration as entityPartExtremes } from "./0047_entity_part_extremes.ts";
import type { Migration } from "./types.ts";

/** Every migration, in order. Append new ones; never edit one that has shipped. */
export const MIGRATIONS: readonly Migration[] = [
  foundation,
  probeCatalogue,
  sampleChanges,
  auth,
  estate,
  collector,
  security,
  alerting,
  liveLogin,
  blackouts,
  timelineProbes,
  notifications,
  listConnectionsTool,
  metricsSummaryTools,
  replicationTopology,
  statementWal,
  irregularIntervals,
  llmTokenUsage,
  conversations,
  memories,
  overviewSummaries,
  anomalyReviews,
  levelRollups,
  entityCells,
  entityGauges,
  entityGaugeParts,
  uncheckedChanges,
  entityCellsByEntity,
  probeSlots,
  changeCellsByLongest,
  changesBySpan,
  changesFoundByCells,
  recordedGauges,
  samplesWithoutForeignKeys,
  channelDestinations,
  shortLeases,
  clearReasons,
  reachabilityChecks,
  alertDampers,
  compressedHistory,
  seriesBaselineCountTools,
  alertCorrelation,
  tableBloatProbe,
  slowStatementsIndex,
  compressedArraysInline,
  statementCellsWithoutParts,
  entityPartExtremes,
];
