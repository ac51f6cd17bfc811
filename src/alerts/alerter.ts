/**
 * The alerter's I/O shell, the same on Node (a timer in `pglens serve`, `pglens alerter`) and on Workers
 * (the Cron Trigger, after the collector): claim the round through the datastore so that of several
 * instances one evaluates, read rules, overrides, readings and open alerts, let evaluateRound decide, write
 * the changes (the datastore's unique index drops any duplicate a race produces), and now and then refresh
 * the baselines and delete old alerts. Scheduled blackouts open at the start of each round; active ones
 * silence new alerts.
 */
import type { Driver } from "../../drivers/types.ts";
import { type ScopeTarget, coverage } from "../blackouts/scope.ts";
import { withMaintenance } from "../datastore/maintenance-runs.ts";
import { activeBlackouts, materialiseSchedules } from "../datastore/blackouts.ts";
import type { Config } from "../config.ts";
import { deleteOldReviews } from "../datastore/anomaly-reviews.ts";
import { listAlertRules, listOverrides, ruleAvailability } from "../datastore/alert-rules.ts";
import { clearAlerts, deleteOldAlerts, openAlerts, raiseAlerts, recentlyClearedKeys, startClearing, updateAlerts } from "../datastore/alerts.ts";
import type { Logger } from "../log.ts";
import { type DeliveryResult, deliverOnce } from "../notify/deliver.ts";
import { queueNotifications, queueReminders } from "../notify/queue.ts";
import type { Transports } from "../notify/transports.ts";
import { findAlertMetric } from "../vocabulary/alert-metrics.ts";
import { currentValues, refreshBaselines, storedBaselines } from "./baseline-store.ts";
import { type AnomalyReviewer, anomalyReviewer } from "./anomaly-reviewer.ts";
import { detectAnomaly } from "./baselines.ts";
import { type AnomalyCandidate, type RoundConnection, type RoundRule, evaluateRound } from "./evaluate-round.ts";
import { loadReadings } from "./load-readings.ts";
import { groupBy } from "../group-by.ts";

const RETENTION_EVERY_SECONDS = 3600;

export interface AlerterSettings {
  retention_days: number;
  anomaly_enabled: boolean;
  anomaly_sensitivity: number;
  baseline_refresh_minutes: number;
  cooldown_seconds: number;
  /** Alerts raised on one server or cluster within this many seconds share a correlation id (0: never). */
  correlation_window_seconds: number;
}

export interface RoundResult {
  /** False when another instance ran this round. */
  ran: boolean;
  connections: number;
  raised: number[];
  updated: number;
  cleared: number[];
  deletedOld: number;
  /** Baseline rows written when this round refreshed them, else null. */
  baselines: number | null;
}

export const alerterSettings = async (db: Driver) => (await db.query<AlerterSettings>("SELECT * FROM alerter_settings WHERE id = 1"))[0];

/** Tier 1: the current value of each baseline metric against its most specific baseline; tiers 2-3 (the reviewer) may suppress it. */
async function findAnomalies(
  db: Driver,
  connections: readonly RoundConnection[],
  sensitivity: number,
  now: Date,
  review?: AnomalyReviewer,
): Promise<AnomalyCandidate[]> {
  const connectionIds = connections.map((c) => c.connectionId);
  const names = new Map(connections.map((c) => [c.connectionId, c.name]));
  // Each value's baselines looked up by key, not filtered from all of them: that grew with the square of the estate.
  const keyOf = (x: { connection_id: number; database_name: string; metric_name: string }) => JSON.stringify([x.connection_id, x.database_name, x.metric_name]);
  const baselines = groupBy(await storedBaselines(db, connectionIds), keyOf);
  const candidates: AnomalyCandidate[] = [];
  for (const v of await currentValues(db, connectionIds, now.getTime())) {
    const own = baselines.get(keyOf(v)) ?? [];
    const anomaly = detectAnomaly(v.value, v.t, own, sensitivity);
    if (!anomaly) continue;
    const candidate: AnomalyCandidate = { connection_id: v.connection_id, database_name: v.database_name, metric_name: v.metric_name, value: v.value, anomaly };
    if (!review) {
      candidates.push(candidate);
      continue;
    }
    const { decision, details } = await review({ ...candidate, server_name: names.get(v.connection_id) ?? String(v.connection_id) });
    if (decision === "alert") candidates.push({ ...candidate, review: details });
  }
  return candidates;
}

/** Marks each connection (or database of it) an active blackout covers. */
function withBlackouts(connections: ReadonlyArray<Omit<RoundConnection, "blackedOut">>, blackouts: readonly ScopeTarget[]): RoundConnection[] {
  return connections.map((c) => {
    const covered = blackouts.map((b) => coverage(b, c)).filter((x) => x !== null);
    return { ...c, blackedOut: covered.some((x) => "all" in x), blackedOutDatabases: new Set(covered.flatMap((x) => ("database" in x ? [x.database] : []))) };
  });
}

/** Evaluates one round without claiming it: what a claimed round does, and what racing instances would do. */
export async function evaluateAndApply(
  db: Driver,
  now = new Date(),
  review?: AnomalyReviewer,
  settings?: AlerterSettings,
): Promise<Omit<RoundResult, "ran" | "deletedOld" | "baselines">> {
  settings ??= await alerterSettings(db);
  const placed = await db.query<Omit<RoundConnection, "blackedOut">>(
    `SELECT c.name, c.connection_error AS error, c.cluster_id AS "clusterId", cl.group_id AS "groupId", c.id AS "connectionId"
       FROM connections c LEFT JOIN clusters cl ON cl.id = c.cluster_id WHERE c.is_monitored ORDER BY c.id`,
  );
  const connections = withBlackouts(placed, await activeBlackouts(db));
  const rules = await listAlertRules(db);
  const availability = await ruleAvailability(db, rules);
  const roundRules: RoundRule[] = rules.map((r) => ({ ...r, available: availability.get(r.id)!.available }));
  const metrics = [...new Set(roundRules.filter((r) => r.available).map((r) => r.metric_name))].map((m) => findAlertMetric(m)!);
  const evaluated = new Set(connections.map((c) => c.connectionId));
  const readings = await loadReadings(db, [...evaluated], metrics, now);
  const changes = evaluateRound({
    rules: roundRules,
    overrides: await listOverrides(db),
    connections,
    readings,
    // Alerts on servers pglens does not monitor (the demo's history, a server set aside) stay as they were:
    // nothing judges them this round, so nothing may clear them.
    open: (await openAlerts(db)).filter((a) => evaluated.has(a.connection_id)),
    recentlyCleared: await recentlyClearedKeys(db, settings.cooldown_seconds),
    anomalies: settings.anomaly_enabled ? await findAnomalies(db, connections, settings.anomaly_sensitivity, now, review) : [],
    now: now.getTime(),
  });
  const raised = await raiseAlerts(db, changes.raise, settings.cooldown_seconds, settings.correlation_window_seconds);
  const fired = await updateAlerts(db, changes.update);
  await startClearing(db, changes.clearing);
  const cleared = await clearAlerts(db, changes.clear);
  const silent = new Set(changes.clear.filter((c) => c.silent).map((c) => c.id));
  // Only this alerter's own inserts, activations, re-activations and clears come back, so each is queued once;
  // pending alerts and the pending ones that did not last are never notified.
  await queueNotifications(db, [
    ...raised.filter((r) => r.status === "active").map((r) => ({ alert_id: r.id, kind: "alert_fire" as const, sequence: 1 })),
    ...fired.map((r) => ({ alert_id: r.id, kind: "alert_fire" as const, sequence: r.fire_count })),
    ...cleared.filter((id) => !silent.has(id)).map((id) => ({ alert_id: id, kind: "alert_clear" as const, sequence: 0 })),
  ]);
  return { connections: connections.length, raised: raised.map((r) => r.id), updated: changes.update.length, cleared };
}

export async function alerterOnce(db: Driver, config: Config, log: Logger): Promise<RoundResult> {
  const settings = await alerterSettings(db);
  let baselines: number | null = null;
  // A little under the interval, so a timer's drift never skips a round.
  const round = await withMaintenance(db, "alerter", Math.max(1, config.alerter.interval_seconds * 0.9), async () => {
    // Baselines first, so a first round already has them; claimed apart, as they are due less often.
    if (settings.anomaly_enabled)
      baselines = (await withMaintenance(db, "baselines", settings.baseline_refresh_minutes * 60, () => refreshBaselines(db))) ?? null;
    // Scheduled maintenance windows open before the round, so their first minute is already quiet.
    const opened = await materialiseSchedules(db);
    if (opened.length) log.info("scheduled blackouts opened", { blackouts: opened });
    const evaluated = await evaluateAndApply(db, new Date(), anomalyReviewer(db, config.llm, log), settings);
    await queueReminders(db);
    return evaluated;
  });
  if (!round) return { ran: false, connections: 0, raised: [], updated: 0, cleared: [], deletedOld: 0, baselines: null };
  const deletedOld =
    (await withMaintenance(db, "alert_retention", RETENTION_EVERY_SECONDS, async () => {
      const deleted = await deleteOldAlerts(db, settings.retention_days);
      await deleteOldReviews(db, settings.retention_days);
      return deleted;
    })) ?? 0;
  if (round.raised.length || round.cleared.length) log.info("alerter round", { raised: round.raised, cleared: round.cleared, updated: round.updated });
  return { ran: true, ...round, deletedOld, baselines };
}

/** An alerter round (if this instance wins it), then a delivery pass (every instance sends what is due). */
export async function alertAndDeliver(
  db: Driver,
  config: Config,
  log: Logger,
  transports: Transports,
): Promise<{ round: RoundResult; delivery: DeliveryResult }> {
  const round = await alerterOnce(db, config, log);
  const delivery = await deliverOnce(db, config, log, transports);
  return { round, delivery };
}

/** Node: a round and a delivery pass every interval until stopped; they never overlap. */
export function startAlerter(db: Driver, config: Config, log: Logger, transports: Transports, onRound?: (seconds: number) => void): { stop(): Promise<void> } {
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: () => void = () => {};
  const loop = async () => {
    while (!stopped) {
      const started = performance.now();
      current = alertAndDeliver(db, config, log, transports)
        .then(() => onRound?.((performance.now() - started) / 1000))
        .catch((err: Error) => log.error("alerter round failed", { error: err.message }));
      await current;
      if (!stopped) await new Promise<void>((r) => ((wake = r), (timer = setTimeout(r, config.alerter.interval_seconds * 1000))));
    }
  };
  void loop();
  log.info("alerter started", { interval_seconds: config.alerter.interval_seconds });
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake();
      await current;
    },
  };
}
