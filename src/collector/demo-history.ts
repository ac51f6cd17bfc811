/**
 * A generated, realistic day of samples for a demo connection, written through the sample writer, so a
 * fresh install has something to look at: three databases with a daily traffic curve, a statistics reset,
 * a collector outage (a gap), network interfaces with loopback, WAL, database sizes and settings.
 */
import type { Driver } from "../../drivers/types.ts";
import { type SampleRow, writeSamples } from "./sample-writer.ts";

const STEP_MS = 60_000;
const HOURS = 24;

/** Daytime busy, night quiet: a smooth factor between 0.2 and 1. */
const load = (t: number) => 0.6 - 0.4 * Math.cos(((t / 3_600_000) % 24) / 24 * 2 * Math.PI);

export async function loadDemoHistory(db: Driver, connectionId: number, now = Date.now()): Promise<number> {
  const start = Math.floor(now / STEP_MS) * STEP_MS - HOURS * 3_600_000;
  const resetAt = start + 15 * 3_600_000; // pg_stat_reset() on `shop`
  const outage = [start + 9 * 3_600_000, start + 9 * 3_600_000 + 25 * 60_000]; // the collector was down
  const databases = [
    { name: "shop", tps: 40, reads: 300 },
    { name: "analytics", tps: 5, reads: 900 },
    { name: "postgres", tps: 0.2, reads: 1 },
  ];
  const totals = new Map<string, Record<string, number>>();
  const batches: Record<string, SampleRow[]> = { pg_stat_database: [], pg_sys_network_info: [], pg_stat_wal: [], pg_database: [] };
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
  for (let t = start; t <= start + HOURS * 3_600_000; t += STEP_MS) {
    if (t >= outage[0] && t < outage[1]) continue;
    const collected_at = new Date(t).toISOString();
    const f = load(t);
    for (const d of databases) {
      const prev = totals.get(d.name) ?? { xact_commit: 10_000, xact_rollback: 20, blks_read: 5_000, blks_hit: 900_000, blk_read_time: 2_000, active_time: 50_000, session_time: 400_000, tup_inserted: 1_000 };
      if (d.name === "shop" && t >= resetAt && t - STEP_MS < resetAt) for (const k of Object.keys(prev)) prev[k] = 0;
      const next = {
        xact_commit: prev.xact_commit + Math.round(d.tps * 60 * f),
        xact_rollback: prev.xact_rollback + Math.round(d.tps * 0.6 * f),
        blks_read: prev.blks_read + Math.round(d.reads * 60 * f * 0.05),
        blks_hit: prev.blks_hit + Math.round(d.reads * 60 * f),
        blk_read_time: prev.blk_read_time + Math.round(60_000 * 0.02 * f * (d.reads / 300)),
        active_time: prev.active_time + Math.round(60_000 * f * (d.tps / 20)),
        session_time: prev.session_time + 60_000 * (d.name === "postgres" ? 1 : 8),
        tup_inserted: prev.tup_inserted + Math.round(d.tps * 30 * f),
      };
      totals.set(d.name, next);
      const reset = d.name === "shop" && t >= resetAt ? new Date(resetAt).toISOString() : null;
      batches.pg_stat_database.push({ collected_at, database_name: d.name, datname: d.name, numbackends: Math.round(2 + 18 * f * (d.tps / 40)), ...next, stats_reset: reset });
      batches.pg_database.push({ collected_at, datname: d.name, database_size_bytes: 50_000_000 + Math.round((t - start) / 1000) * (d.tps * 20), age_datfrozenxid: 1_000 + Math.round((t - start) / 10_000) });
    }
    for (const [name, rate] of [["eth0", 250_000], ["eth1", 40_000], ["lo", 900_000]] as const) {
      const net = add(`net:${name}`, { rx_bytes: rate * 60 * f, tx_bytes: rate * 40 * f });
      batches.pg_sys_network_info.push({ collected_at, interface_name: name, ...net, rx_errors: 0, tx_errors: 0 });
    }
    batches.pg_stat_wal.push({ collected_at, ...add("wal", { wal_records: 3000 * f, wal_bytes: 1_500_000 * f, wal_fpi: 80 * f }), stats_reset: null });
    if (batches.pg_stat_database.length >= 600) await flush();
  }
  await flush();
  return written;
}
