/**
 * The time a sample is stamped with: the start of its interval's slot (collector/schedule-store.ts) when its round
 * claimed it within alignToleranceMs of that start, else the claim's time. Samples on the slots are evenly spaced,
 * which lets long windows be read by difference (samples/read-by-difference.ts) instead of row by row. A stamp
 * was never the instant the server's statistics were read (a round connects, and may query many databases, after
 * it); on the slot, a rate divides by the interval instead of by the time between two claims, which differs from
 * it by at most the tolerance. A round that claimed later (a slow tick, a late Cron Trigger, a claim taken over
 * after its lease) keeps its own time, so no two runs of a probe share a stamp.
 */

/** At most 1 % of the interval, and never more than a second. */
export const alignToleranceMs = (intervalSeconds: number): number => Math.min(1000, intervalSeconds * 10);

export function sampleTime(claimedAt: number, intervalSeconds: number): number {
  const slot = intervalSeconds * 1000;
  const slotStart = Math.floor(claimedAt / slot) * slot;
  return claimedAt - slotStart <= alignToleranceMs(intervalSeconds) ? slotStart : claimedAt;
}
