import { counter, marker, timeMs, withResets } from "./columns.ts";
import type { ProbeDefinition } from "./types.ts";

export const pgStatCheckpointer: ProbeDefinition = {
  name: "pg_stat_checkpointer",
  description: "Checkpoints and background writer activity (pg_stat_checkpointer from PostgreSQL 17, pg_stat_bgwriter before)",
  scope: "server",
  defaultIntervalSeconds: 600,
  defaultRetentionDays: 7,
  keys: [],
  columns: withResets(
    [
      counter("num_timed", "Scheduled checkpoints"),
      counter("num_requested", "Requested checkpoints"),
      counter("restartpoints_timed", "Scheduled restartpoints (PostgreSQL 17+)"),
      counter("restartpoints_req", "Requested restartpoints (PostgreSQL 17+)"),
      counter("restartpoints_done", "Restartpoints performed (PostgreSQL 17+)"),
      timeMs("write_time", "Time writing files during checkpoints (ms)"),
      timeMs("sync_time", "Time syncing files during checkpoints (ms)"),
      counter("buffers_written", "Buffers written by checkpoints"),
      marker("stats_reset", "When the checkpointer statistics were last reset"),
      counter("buffers_clean", "Buffers written by the background writer"),
      counter("maxwritten_clean", "Times the background writer stopped for writing too many buffers"),
      counter("buffers_alloc", "Buffers allocated"),
      marker("bgwriter_stats_reset", "When the background writer statistics were last reset"),
    ],
    "stats_reset",
    { buffers_clean: "bgwriter_stats_reset", maxwritten_clean: "bgwriter_stats_reset", buffers_alloc: "bgwriter_stats_reset" },
  ),
  collect: {
    runs: "server",
    sql: (major) => [
      major >= 17
        ? `SELECT c.num_timed, c.num_requested, c.restartpoints_timed, c.restartpoints_req, c.restartpoints_done, c.write_time, c.sync_time,
                  c.buffers_written, c.stats_reset, b.buffers_clean, b.maxwritten_clean, b.buffers_alloc, b.stats_reset AS bgwriter_stats_reset
             FROM pg_stat_checkpointer c CROSS JOIN pg_stat_bgwriter b`
        : `SELECT checkpoints_timed AS num_timed, checkpoints_req AS num_requested, checkpoint_write_time AS write_time,
                  checkpoint_sync_time AS sync_time, buffers_checkpoint AS buffers_written, stats_reset, buffers_clean, maxwritten_clean,
                  buffers_alloc, stats_reset AS bgwriter_stats_reset
             FROM pg_stat_bgwriter`,
    ],
  },
};
