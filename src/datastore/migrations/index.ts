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
import type { Migration } from "./types.ts";

/** Every migration, in order. Append new ones; never edit one that has shipped. */
export const MIGRATIONS: readonly Migration[] = [foundation, probeCatalogue, sampleChanges, auth, estate, collector, security, alerting, liveLogin, blackouts, timelineProbes, notifications, listConnectionsTool, metricsSummaryTools, replicationTopology, statementWal, irregularIntervals, llmTokenUsage, conversations, memories, overviewSummaries, anomalyReviews, levelRollups, entityCells, entityGauges];
