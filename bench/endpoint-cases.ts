/**
 * The metrics endpoints' part of bench:metrics: a day of the samples they read (20 databases; sessions every
 * 60 s; statements, tables and checkpoints every 5 minutes, as the probes' defaults) and the requests timed.
 */
import type { Driver } from "../drivers/types.ts";
import { type SampleRow, writeSamples } from "../src/samples/sample-writer.ts";

const DATABASES = 20;
const STATEMENTS_PER_DATABASE = 50;
const TABLES_PER_DATABASE = 10;
const SESSIONS = 60;

export async function loadEndpointDay(db: Driver, connectionId: number, end: number, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const start = end - 86_400_000;
  const batch: Record<string, SampleRow[]> = {
    pg_database: [],
    pg_stat_activity: [],
    pg_stat_statements: [],
    pg_stat_all_tables: [],
    pg_stat_checkpointer: [],
  };
  const flush = async () => {
    for (const [probe, rows] of Object.entries(batch)) {
      if (rows.length) await writeSamples(db, { connectionId, probe, rows });
      batch[probe] = [];
    }
  };
  for (let t = start, j = 0; t <= end; t += 60_000, j++) {
    const collected_at = new Date(t).toISOString();
    for (let s = 0; s < SESSIONS; s++) {
      batch.pg_stat_activity.push({
        collected_at,
        pid: 1000 + s,
        datname: `db${s % DATABASES}`,
        usename: `app${s % 4}`,
        application_name: `svc${s % 6}`,
        client_addr: `10.0.0.${s % 9}`,
        state: s % 3 ? "idle" : "active",
        backend_type: "client backend",
      });
    }
    if (j % 5 === 0) {
      for (let d = 0; d < DATABASES; d++) {
        batch.pg_database.push({ collected_at, datname: `db${d}`, database_size_bytes: 1e9 * (d + 1) + j * 1000, age_datfrozenxid: 1e6 * (d + 1) + j });
        for (let q = 0; q < STATEMENTS_PER_DATABASE; q++) {
          const calls = j * (q + 1) * 3;
          batch.pg_stat_statements.push({
            collected_at,
            database_name: `db${d}`,
            queryid: String(BigInt(d) * 1_000_003n + BigInt(q) - 9_000_000_000_000_000_000n),
            userid: 10,
            dbid: 16384 + d,
            toplevel: true,
            query: `SELECT * FROM t${q} WHERE id = $1`,
            calls,
            total_exec_time: calls * 0.3 * (q + 1),
            rows: calls,
            shared_blks_hit: calls * 4,
            shared_blks_read: calls,
            stats_reset: null,
          });
        }
        for (let r = 0; r < TABLES_PER_DATABASE; r++)
          batch.pg_stat_all_tables.push({
            collected_at,
            database_name: `db${d}`,
            schemaname: "public",
            relname: `t${r}`,
            n_live_tup: 1e5 * (r + 1),
            n_dead_tup: j * (r + 1),
          });
      }
      batch.pg_stat_checkpointer.push({ collected_at, num_timed: j, write_time: j * 900, sync_time: j * 40, stats_reset: null });
    }
    if (batch.pg_stat_activity.length >= 60 * SESSIONS) await flush();
  }
  await flush();
  await db.query("ANALYZE");
  log(`loaded a day of sessions, statements, tables and checkpoints in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** [name, path and query] of each endpoint request, for connection `id`. */
export function endpointCases(id: number): Array<[string, string]> {
  return [
    [
      "metrics query, group_by=database_name 24h",
      `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${id}&metrics=xact_commit_per_sec&group_by=database_name&time_range=24h`,
    ],
    ["performance-summary 24h", `/api/v1/metrics/performance-summary?connection_id=${id}&time_range=24h`],
    ["database-summaries 24h", `/api/v1/metrics/database-summaries?connection_id=${id}&time_range=24h`],
    ["connection-groups 24h", `/api/v1/metrics/connection-groups?connection_id=${id}&group_by=application_name&time_range=24h`],
    ["top-queries (lifetime)", `/api/v1/metrics/top-queries?connection_id=${id}`],
    ["top-queries 24h", `/api/v1/metrics/top-queries?connection_id=${id}&time_range=24h`],
    ["query-stats 24h", `/api/v1/metrics/query-stats?connection_id=${id}&queryid=-9000000000000000000&time_range=24h`],
    ["latest pg_stat_all_tables", `/api/v1/metrics/latest?connection_id=${id}&probe_name=pg_stat_all_tables&order_by=n_dead_tup`],
  ];
}
