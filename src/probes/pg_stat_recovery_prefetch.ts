import { counter, gauge, marker, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatRecoveryPrefetch: ProbeDefinition = {
  name: "pg_stat_recovery_prefetch",
  description: "Blocks prefetched during recovery (standbys)",
  scope: "server",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: [],
  columns: withResets(
    [
      counter("prefetch", "Blocks prefetched because they were not in the buffer pool"),
      counter("hit", "Blocks not prefetched because they were already in the buffer pool"),
      counter("skip_init", "Blocks not prefetched because they would be zero-initialised"),
      counter("skip_new", "Blocks not prefetched because they did not exist yet"),
      counter("skip_fpw", "Blocks not prefetched because a full page image was in the WAL"),
      counter("skip_rep", "Blocks not prefetched because they were already recently prefetched"),
      gauge("wal_distance", "How far ahead the prefetcher is looking (bytes)", "integer"),
      gauge("block_distance", "How many blocks ahead the prefetcher is looking", "integer"),
      gauge("io_depth", "Prefetches in flight", "integer"),
      marker("stats_reset"),
    ],
    "stats_reset",
  ),
  collect: {
    runs: "server",
    sql: (major) =>
      major < 15
        ? null
        : [`SELECT prefetch, hit, skip_init, skip_new, skip_fpw, skip_rep, wal_distance, block_distance, io_depth, stats_reset FROM pg_stat_recovery_prefetch`],
  },
};
