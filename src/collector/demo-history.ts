/**
 * A generated, realistic day of samples for a demo connection, written through the sample writer, so a
 * fresh install has something to look at: three databases with a daily traffic curve, a statistics reset,
 * a collector outage (a gap), network interfaces with loopback, WAL, database sizes; every five minutes sessions,
 * statements (reset with the statistics), checkpoints, tables and the postmaster (restarted once); every hour the
 * settings (work_mem changed once) and extensions.
 */
import type { Driver } from "../../drivers/types.ts";
import { type SampleRow, writeSamples } from "../samples/sample-writer.ts";
import { COLLECTOR_MARK } from "../probes/statement-mark.ts";

/** The demo connection's host: `.invalid` is reserved (RFC 2606), so no real server can ever have it. */
export const DEMO_HOST = "demo.invalid";
export const isDemoHost = (host: string) => host === DEMO_HOST;

const STEP_MS = 60_000;
const FIVE_MINUTES_MS = 300_000;

const STATEMENTS = [
  { queryid: "-4617127464133208123", database: "shop", query: "SELECT * FROM orders WHERE customer_id = $1", perMinute: 1200, ms: 0.4, rows: 3, reads: 0.2 },
  {
    queryid: "7215843365811412904",
    database: "shop",
    query: "UPDATE cart_items SET quantity = $1 WHERE id = $2",
    perMinute: 300,
    ms: 1.2,
    rows: 1,
    reads: 0.1,
  },
  {
    queryid: "918273645501928374",
    database: "shop",
    query: "INSERT INTO orders (customer_id, total) VALUES ($1, $2)",
    perMinute: 60,
    ms: 2.5,
    rows: 1,
    reads: 0.5,
  },
  {
    queryid: "3355779911224466881",
    database: "analytics",
    query: "SELECT date_trunc($1, created_at), sum(total) FROM orders GROUP BY 1",
    perMinute: 0.5,
    ms: 8_000,
    rows: 30,
    reads: 20_000,
  },
  {
    queryid: "1122334455667788990",
    database: "postgres",
    query: `SELECT ${COLLECTOR_MARK} datname FROM pg_database`,
    perMinute: 1,
    ms: 0.1,
    rows: 4,
    reads: 0,
  },
];
const HOURS = 24;
const HOUR_MS = 3_600_000;

/** When the demo day's events happen, for the samples here and the alerts and window of demo-events.ts. */
export function DEMO_TIMES(now: number) {
  const start = Math.floor(now / STEP_MS) * STEP_MS - HOURS * HOUR_MS;
  return {
    start,
    resetAt: start + 15 * HOUR_MS, // pg_stat_reset() on `shop`
    outage: [start + 9 * HOUR_MS, start + 9 * HOUR_MS + 25 * 60_000] as const, // the collector was down
    configChange: start + 14 * HOUR_MS + 30 * 60_000, // work_mem raised
    restart: start + 17 * HOUR_MS + 2 * 60_000, // to apply shared_buffers
    blackout: [start + 17 * HOUR_MS, start + 17 * HOUR_MS + 30 * 60_000] as const,
    deadRows: start + 21 * HOUR_MS + 40 * 60_000,
  };
}

/** The demo server's settings, as pg_settings rows; work_mem and shared_buffers change during the day. */
function settingsAt(t: number, times: ReturnType<typeof DEMO_TIMES>) {
  const values: Record<string, [string, string | null]> = {
    server_version: ["17.2", null],
    max_connections: ["200", null],
    shared_buffers: [t >= times.restart ? "262144" : "131072", "8kB"],
    work_mem: [t >= times.configChange ? "16384" : "4096", "kB"],
    maintenance_work_mem: ["262144", "kB"],
    effective_cache_size: ["524288", "8kB"],
    max_wal_size: ["2048", "MB"],
    checkpoint_timeout: ["300", "s"],
    wal_level: ["replica", null],
    autovacuum: ["on", null],
    shared_preload_libraries: ["pg_stat_statements", null],
    in_hot_standby: ["off", null],
    cluster_name: ["demo", null],
  };
  return Object.entries(values).map(([name, [setting, unit]]) => ({ name, setting, unit }));
}

/** Daytime busy, night quiet: a smooth factor between 0.2 and 1. */
const load = (t: number) => 0.6 - 0.4 * Math.cos((((t / HOUR_MS) % 24) / 24) * 2 * Math.PI);

export async function loadDemoHistory(db: Driver, connectionId: number, now = Date.now()): Promise<number> {
  const times = DEMO_TIMES(now);
  const { start, resetAt, outage } = times;
  const databases = [
    { name: "shop", tps: 40, reads: 300, xidAge: 180_000_000 },
    { name: "analytics", tps: 5, reads: 900, xidAge: 45_000_000 },
    { name: "postgres", tps: 0.2, reads: 1, xidAge: 2_000_000 },
  ];
  const totals = new Map<string, Record<string, number>>();
  const batches: Record<string, SampleRow[]> = {
    pg_stat_database: [],
    pg_sys_network_info: [],
    pg_stat_wal: [],
    pg_database: [],
    pg_stat_activity: [],
    pg_stat_statements: [],
    pg_stat_checkpointer: [],
    pg_stat_all_tables: [],
    pg_settings: [],
    pg_postmaster: [],
    pg_extension: [],
  };
  let written = 0;
  /** Cumulative counters: adds one step's increments to the running totals under `key`. */
  const add = (key: string, step: Record<string, number>) => {
    const sum = totals.get(key) ?? {};
    for (const [k, v] of Object.entries(step)) sum[k] = (sum[k] ?? 0) + Math.round(v);
    totals.set(key, sum);
    return { ...sum };
  };
  const flush = async () => {
    for (const [probe, rows] of Object.entries(batches)) {
      if (rows.length) written += await writeSamples(db, { connectionId, probe, rows });
      batches[probe] = [];
    }
  };
  for (let t = start; t <= start + HOURS * HOUR_MS; t += STEP_MS) {
    if (t >= outage[0] && t < outage[1]) continue;
    const collected_at = new Date(t).toISOString();
    const f = load(t);
    for (const d of databases) {
      const prev = totals.get(d.name) ?? {
        xact_commit: 10_000,
        xact_rollback: 20,
        blks_read: 5_000,
        blks_hit: 900_000,
        blk_read_time: 2_000,
        active_time: 50_000,
        idle_in_transaction_time: 5_000,
        session_time: 400_000,
        tup_inserted: 1_000,
        temp_bytes: 0,
        deadlocks: 0,
        conflicts: 0,
      };
      if (d.name === "shop" && t >= resetAt && t - STEP_MS < resetAt) for (const k of Object.keys(prev)) prev[k] = 0;
      const next = {
        xact_commit: prev.xact_commit + Math.round(d.tps * 60 * f),
        xact_rollback: prev.xact_rollback + Math.round(d.tps * 0.6 * f),
        blks_read: prev.blks_read + Math.round(d.reads * 60 * f * 0.05),
        blks_hit: prev.blks_hit + Math.round(d.reads * 60 * f),
        blk_read_time: prev.blk_read_time + Math.round(60_000 * 0.02 * f * (d.reads / 300)),
        active_time: prev.active_time + Math.round(60_000 * f * (d.tps / 20)),
        idle_in_transaction_time: prev.idle_in_transaction_time + Math.round(60_000 * f * (d.tps / 80)),
        session_time: prev.session_time + 60_000 * (d.name === "postgres" ? 1 : 8),
        tup_inserted: prev.tup_inserted + Math.round(d.tps * 30 * f),
        // The analytics reports spill sorts to disk; the shop deadlocks now and then at its busiest.
        temp_bytes: prev.temp_bytes + (d.name === "analytics" ? Math.round(4_000_000 * f) : 0),
        deadlocks: prev.deadlocks + (d.name === "shop" && f > 0.9 && (t / STEP_MS) % 37 === 0 ? 1 : 0),
        conflicts: prev.conflicts,
      };
      totals.set(d.name, next);
      const reset = d.name === "shop" && t >= resetAt ? new Date(resetAt).toISOString() : null;
      batches.pg_stat_database.push({
        collected_at,
        database_name: d.name,
        datname: d.name,
        numbackends: Math.round(2 + 18 * f * (d.tps / 40)),
        ...next,
        stats_reset: reset,
      });
      batches.pg_database.push({
        collected_at,
        datname: d.name,
        database_size_bytes: 50_000_000 + Math.round((t - start) / 1000) * (d.tps * 20),
        age_datfrozenxid: d.xidAge + Math.round((t - start) / 50),
      });
    }
    for (const [name, rate] of [
      ["eth0", 250_000],
      ["eth1", 40_000],
      ["lo", 900_000],
    ] as const) {
      const net = add(`net:${name}`, { rx_bytes: rate * 60 * f, tx_bytes: rate * 40 * f });
      batches.pg_sys_network_info.push({ collected_at, interface_name: name, ...net, rx_errors: 0, tx_errors: 0 });
    }
    batches.pg_stat_wal.push({ collected_at, ...add("wal", { wal_records: 3000 * f, wal_bytes: 1_500_000 * f, wal_fpi: 80 * f }), stats_reset: null });
    if ((t - start) % FIVE_MINUTES_MS === 0) {
      const afterReset = t >= resetAt;
      if (afterReset && t - FIVE_MINUTES_MS < resetAt) for (const key of [...totals.keys()].filter((k) => k.startsWith("stmt:"))) totals.delete(key);
      for (const s of STATEMENTS) {
        const calls = s.perMinute * 5 * f;
        const counters = add(`stmt:${s.queryid}`, {
          calls,
          total_exec_time: calls * s.ms,
          rows: calls * s.rows,
          shared_blks_hit: calls * 40,
          shared_blks_read: calls * s.reads,
        });
        batches.pg_stat_statements.push({
          collected_at,
          database_name: s.database,
          queryid: s.queryid,
          userid: 10,
          dbid: 16384,
          toplevel: true,
          query: s.query,
          ...counters,
          mean_exec_time: counters.calls ? counters.total_exec_time / counters.calls : 0,
          stats_reset: afterReset ? new Date(resetAt).toISOString() : null,
        });
      }
      let pid = 1000;
      for (const [application_name, usename, datname, client_addr, count] of [
        ["shop-web", "shop", "shop", "10.0.1.15", Math.round(4 + 12 * f)],
        ["shop-worker", "shop", "shop", "10.0.1.16", 3],
        ["metabase", "analyst", "analytics", "10.0.2.40", Math.round(1 + 3 * f)],
        ["psql", "postgres", "postgres", null, 1],
      ] as const) {
        for (let i = 0; i < count; i++) {
          const state = i % 3 === 0 ? "active" : i % 7 === 6 ? "idle in transaction" : "idle";
          batches.pg_stat_activity.push({ collected_at, pid: pid++, datname, usename, application_name, client_addr, state, backend_type: "client backend" });
        }
      }
      const startTime = new Date(t >= times.restart ? times.restart : start - 30 * 24 * HOUR_MS).toISOString();
      batches.pg_stat_activity.push({ collected_at, pid: 99, backend_type: "checkpointer", backend_start: startTime });
      batches.pg_postmaster.push({ collected_at, start_time: startTime, conf_load_time: startTime, is_in_recovery: false, server_version: "17.2" });
      batches.pg_stat_checkpointer.push({
        collected_at,
        ...add("checkpointer", { num_timed: 1, write_time: 4_000 * f, sync_time: 150 * f, buffers_written: 2_000 * f }),
        stats_reset: null,
      });
      for (const [relname, live, deadShare] of [
        ["orders", 2_000_000, 0.04],
        ["customers", 150_000, 0.01],
        ["cart_items", 80_000, 0.25],
      ] as const) {
        const n_live_tup = Math.round(live * (1 + (t - start) / 86_400_000));
        batches.pg_stat_all_tables.push({
          collected_at,
          database_name: "shop",
          schemaname: "public",
          relname,
          n_live_tup,
          n_dead_tup: Math.round(n_live_tup * deadShare * f),
        });
      }
    }
    if ((t - start) % HOUR_MS === 0) {
      batches.pg_settings.push(...settingsAt(t, times).map((r) => ({ collected_at, ...r })));
      batches.pg_extension.push(
        { collected_at, database_name: "shop", extname: "pg_stat_statements", extversion: "1.11" },
        { collected_at, database_name: "shop", extname: "plpgsql", extversion: "1.0" },
      );
    }
    if (batches.pg_stat_database.length >= 600) await flush();
  }
  await flush();
  return written;
}
