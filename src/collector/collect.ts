/**
 * One collector tick, the same on Node (a timer) and on Workers (the Cron Trigger): find the (connection,
 * probe) pairs that are due by their effective interval, claim them through the datastore so no other
 * instance runs them too, run each server with bounded concurrency, record outcomes, then the upkeep
 * (maintenance.ts: retention, compression, session pruning) unless told not to.
 */
import type { Driver } from "../../drivers/types.ts";
import type { Config } from "../config.ts";
import { type ConnectionRow, listConnections } from "../datastore/connections.ts";
import { effectiveProbeConfigs } from "../datastore/probe-configs.ts";
import { eachLimited } from "../each-limited.ts";
import type { Logger } from "../log.ts";
import { collectorMaintenance, startMaintenance, type Upkeep } from "./maintenance.ts";
import { withMonitoredClient } from "../monitored/client.ts";
import { runConnection } from "./run-connection.ts";
import {
  type Candidate,
  type ProbeOutcome,
  backingOff,
  claimDue,
  claimReachabilityChecks,
  recordOutcomes,
  recordReachable,
  recordUnreachable,
  releaseClaims,
} from "./schedule-store.ts";
import { groupBy } from "../group-by.ts";

export interface CollectOptions {
  /** Servers collected at once. */
  concurrency?: number;
  /** About how many servers one tick claims (default: 12 per concurrent slot), so that one lease covers them. */
  maxConnections?: number;
  statementTimeoutMs?: number;
  /** Run the collector's upkeep after the round (default); `pglens serve` runs it on its own timer instead. */
  maintenance?: boolean;
}

export interface TickResult extends Upkeep {
  claimed: number;
  /** The tick claimed as much as it may: more may be due. */
  more?: boolean;
  outcomes: ProbeOutcome[];
  unreachable: Array<{ connectionId: number; error: string }>;
}

/**
 * Servers a tick claims per concurrent slot: at about a second per server (35 probes, thousands of statements),
 * a tick's work stays well inside the 120 s lease even on a slow machine.
 */
const SERVERS_PER_SLOT = 12;
const DEFAULT_CONCURRENCY = 4;

/** Ticks land this long after the whole second: a timer firing a hair early, or a datastore clock a little behind, would claim in the last slot. */
const TICK_OFFSET_MS = 50;

/** Servers in back-off whose check is due: one that answers leaves back-off and is collected in this very tick. */
async function checkReachability(db: Driver, config: Config, log: Logger, all: readonly ConnectionRow[]): Promise<void> {
  const due = await claimReachabilityChecks(db);
  await eachLimited(due, 4, async (id) => {
    const conn = all.find((c) => c.id === id);
    if (!conn) return;
    const answered = await withMonitoredClient(conn, config.secret, (client) => client.query("SELECT 1"), {
      connectTimeoutMs: 3000,
      statementTimeoutMs: 3000,
    }).then(
      () => true,
      () => false,
    );
    if (!answered) return;
    await recordReachable(db, id);
    log.info("monitored server reachable again", { connection_id: id });
  });
}

export async function collectOnce(db: Driver, config: Config, log: Logger, options: CollectOptions = {}): Promise<TickResult> {
  const result: TickResult = { claimed: 0, outcomes: [], unreachable: [], droppedPartitions: [] };
  const all = (await listConnections(db)).filter((c) => c.is_monitored);
  await checkReachability(db, config, log, all);
  const waiting = await backingOff(db);
  const connections = all.filter((c) => !waiting.has(c.id));
  if (connections.length) {
    const effective = await effectiveProbeConfigs(
      db,
      connections.map((c) => c.id),
    );
    const candidates: Candidate[] = connections.flatMap((c) =>
      [...effective.get(c.id)!.values()]
        .filter((e) => e.is_enabled)
        .map((e) => ({ connectionId: c.id, probe: e.probe_name, intervalSeconds: e.collection_interval_seconds })),
    );
    const claimedAt = Date.now();
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    const probesPerServer = Math.max(1, ...[...groupBy(candidates, (c) => c.connectionId).values()].map((probes) => probes.length));
    const maxRows = (options.maxConnections ?? concurrency * SERVERS_PER_SLOT) * probesPerServer;
    const claimed = await claimDue(db, candidates, maxRows);
    result.claimed = claimed.length;
    result.more = claimed.length >= maxRows;
    const byConnection = groupBy(claimed, (c) => c.connectionId);
    const rows = new Map<number, ConnectionRow>(connections.map((c) => [c.id, c]));

    await eachLimited([...byConnection.entries()], concurrency, async ([id, work]) => {
      const conn = rows.get(id)!;
      try {
        const run = await runConnection(db, conn, work, config.secret, options.statementTimeoutMs ?? 10_000, claimedAt);
        if (!run.reachable) {
          const shortest = Math.min(...work.map((w) => w.intervalSeconds));
          await recordUnreachable(db, id, run.error!, Math.max(5, Math.min(shortest, 60)));
          await releaseClaims(
            db,
            id,
            work.map((w) => w.probe),
          );
          result.unreachable.push({ connectionId: id, error: run.error! });
          log.warn("monitored server unreachable", { connection_id: id, error: run.error });
          return;
        }
        await recordReachable(db, id);
        await recordOutcomes(db, run.outcomes);
        result.outcomes.push(...run.outcomes);
        for (const o of run.outcomes.filter((x) => x.status === "error")) log.warn("probe failed", { connection_id: id, probe: o.probe, error: o.error });
      } catch (err) {
        // The datastore failing under us: let the claims lapse and report.
        log.error("collection run failed", { connection_id: id, error: (err as Error).message });
      }
    });
  }
  if (options.maintenance !== false) Object.assign(result, await collectorMaintenance(db, log));
  return result;
}

/**
 * One whole round: ticks until a tick claims less than it may (a tick claims a bounded batch), or `deadlineMs`
 * has passed. For `pglens collect --once` and the Cron Trigger.
 */
export async function collectDue(db: Driver, config: Config, log: Logger, options: CollectOptions & { deadlineMs?: number } = {}): Promise<TickResult> {
  const total: TickResult = { claimed: 0, outcomes: [], unreachable: [], droppedPartitions: [] };
  const { deadlineMs, ...tickOptions } = options;
  const deadline = Date.now() + (deadlineMs ?? Number.POSITIVE_INFINITY);
  for (;;) {
    const tick = await collectOnce(db, config, log, { ...tickOptions, maintenance: false });
    total.claimed += tick.claimed;
    total.outcomes.push(...tick.outcomes);
    total.unreachable.push(...tick.unreachable);
    if (!tick.more || Date.now() >= deadline) break;
  }
  if (options.maintenance !== false) Object.assign(total, await collectorMaintenance(db, log));
  return total;
}

/**
 * Node: tick at every whole `everyMs` of the clock until stopped (so a run starts just after its slot begins and
 * its sample is stamped on the slot: sample-time.ts); a tick never overlaps the previous one.
 */
export function startCollector(db: Driver, config: Config, log: Logger, everyMs = 1000, onRound?: (seconds: number) => void): { stop(): Promise<void> } {
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  const maintenance = startMaintenance(db, log);
  const loop = async () => {
    while (!stopped) {
      const started = performance.now();
      current = collectOnce(db, config, log, { maintenance: false })
        .then(() => onRound?.((performance.now() - started) / 1000))
        .catch((err: Error) => log.error("collector tick failed", { error: err.message }));
      await current;
      if (!stopped) await new Promise((r) => setTimeout(r, everyMs - (Date.now() % everyMs) + TICK_OFFSET_MS));
    }
  };
  void loop();
  log.info("collector started");
  return {
    async stop() {
      stopped = true;
      await Promise.all([current, maintenance.stop()]);
    },
  };
}
