/**
 * Periodic tasks shared by every instance (retention, auth cleanup, the alerter's round, baselines, alert
 * retention): one instance at a time runs each, by a lease on its row in maintenance_runs.
 */
import type { Queryable } from "../../drivers/types.ts";

/**
 * How long a claim on a periodic task holds without renewal: about two of its periods (at least 2 s, at most
 * 10 min), so a killed instance holds the others up by about that much.
 */
export const maintenanceLeaseSeconds = (everySeconds: number) => Math.min(600, Math.max(2, 2 * everySeconds));

/**
 * Runs `work` if this instance claims the periodic task `task` (its period has passed and nobody holds it);
 * answers undefined when another instance has it. The claim is a lease renewed while `work` runs and released
 * after, so a crash mid-run frees the task within one lease.
 */
export async function withMaintenance<T>(db: Queryable, task: string, everySeconds: number, work: () => Promise<T>): Promise<T | undefined> {
  const lease = maintenanceLeaseSeconds(everySeconds);
  const token = crypto.randomUUID();
  await db.query("INSERT INTO maintenance_runs (task) VALUES ($1) ON CONFLICT DO NOTHING", [task]);
  const claimed = await db.query(
    `UPDATE maintenance_runs SET last_run_at = now(), claimed_until = now() + make_interval(secs => $3), claimed_by = $4
      WHERE task = $1 AND (last_run_at IS NULL OR last_run_at <= now() - make_interval(secs => $2)) AND (claimed_until IS NULL OR claimed_until < now())
      RETURNING task`,
    [task, everySeconds, lease, token],
  );
  if (claimed.length === 0) return undefined;
  const renew = () =>
    db
      .query("UPDATE maintenance_runs SET claimed_until = now() + make_interval(secs => $2) WHERE task = $1 AND claimed_by = $3", [task, lease, token])
      .catch(() => {});
  const renewal = setInterval(renew, (lease * 1000) / 3);
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    await db.query("UPDATE maintenance_runs SET claimed_until = NULL, claimed_by = NULL WHERE task = $1 AND claimed_by = $2", [task, token]).catch(() => {});
  }
}
