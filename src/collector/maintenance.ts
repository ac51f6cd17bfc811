/**
 * The collector's periodic upkeep, shared by every instance through leases on maintenance_runs: expired
 * partitions dropped hourly, closed hours of samples compressed every minute (at most 10 s of work a round, a
 * backlog worked off over rounds), expired sessions pruned. `pglens collect --once` and the Workers Cron Trigger
 * run it after their round; `pglens serve` on a timer of its own, so that it never holds up a collection tick
 * (a tick that starts late stamps its samples off their slot: sample-time.ts).
 */
import type { Driver } from "../../drivers/types.ts";
import { withMaintenance } from "../datastore/maintenance-runs.ts";
import { pruneExpiredAuthState } from "../datastore/sessions.ts";
import type { Logger } from "../log.ts";
import { type CompressionRound, compressClosedChunks } from "../samples/compress-history.ts";
import { dropExpiredPartitions } from "./retention.ts";

const RETENTION_EVERY_SECONDS = 3600;
const COMPRESSION_EVERY_SECONDS = 60;
const COMPRESSION_BUDGET_MS = 10_000;
const AUTH_CLEANUP_EVERY_SECONDS = 600;

export interface Upkeep {
  droppedPartitions: string[];
  /** Closed hours compressed, when this instance ran the compression task. */
  compressed?: CompressionRound;
}

/** Runs each task whose period has passed and that no other instance holds. */
export async function collectorMaintenance(db: Driver, log: Logger): Promise<Upkeep> {
  const upkeep: Upkeep = { droppedPartitions: [] };
  await withMaintenance(db, "retention", RETENTION_EVERY_SECONDS, async () => {
    upkeep.droppedPartitions = await dropExpiredPartitions(db);
    if (upkeep.droppedPartitions.length) log.info("dropped expired partitions", { partitions: upkeep.droppedPartitions });
  });
  await withMaintenance(db, "compression", COMPRESSION_EVERY_SECONDS, async () => {
    upkeep.compressed = await compressClosedChunks(db, Date.now(), COMPRESSION_BUDGET_MS);
    if (upkeep.compressed.chunks) log.info("compressed closed hours of samples", { ...upkeep.compressed });
  });
  await withMaintenance(db, "auth_cleanup", AUTH_CLEANUP_EVERY_SECONDS, async () => {
    const pruned = await pruneExpiredAuthState(db);
    if (pruned) log.info("pruned expired sessions", { sessions: pruned });
  });
  return upkeep;
}

/** Node: collectorMaintenance every `everyMs` until stopped, a round never overlapping the previous one. */
export function startMaintenance(db: Driver, log: Logger, everyMs = 5000): { stop(): Promise<void> } {
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  let wake: () => void = () => {};
  const loop = async () => {
    while (!stopped) {
      current = collectorMaintenance(db, log).catch((err: Error) => log.error("collector maintenance failed", { error: err.message }));
      await current;
      if (!stopped) await new Promise<void>((resolve) => setTimeout((wake = resolve), everyMs));
    }
  };
  void loop();
  return {
    async stop() {
      stopped = true;
      wake();
      await current;
    },
  };
}
