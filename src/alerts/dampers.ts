/**
 * The dampers against flapping, as a pure state machine over one alert key's rounds: `for` (the condition
 * must hold `forMinutes` before the alert fires; until then it is `pending`, visible but not notified) and a
 * clear delay (an alert clears only after its condition has been false `clearDelayMinutes`; if it comes back
 * meanwhile the alert simply stays open). Both 0: fire and clear at once, as without dampers.
 */

export interface Dampers {
  forMinutes: number;
  clearDelayMinutes: number;
}

/** An open alert's damper state; times in epoch milliseconds. */
export interface DamperState {
  status: "pending" | "active" | "acknowledged";
  pendingSince: number | null;
  clearingSince: number | null;
}

export type DamperStep =
  /** Nothing open, nothing to open. */
  | { kind: "none" }
  /** Open an alert, pending or active (active is notified). */
  | { kind: "raise"; status: "pending" | "active" }
  /** Keep it open as it is (still pending, or firing again while clearing: clearingSince back to null). */
  | { kind: "hold" }
  /** A pending alert held long enough: active now, and notified. */
  | { kind: "activate" }
  /** The condition stopped: start (or keep) counting the clear delay from `since`. */
  | { kind: "clearing"; since: number }
  /** Clear it (notified). */
  | { kind: "clear" }
  /** A pending alert whose condition did not last: gone, never notified. */
  | { kind: "drop" };

const minutes = (m: number) => m * 60_000;

export function damperStep(open: DamperState | undefined, violating: boolean, d: Dampers, now: number): DamperStep {
  if (violating) {
    if (!open) return { kind: "raise", status: d.forMinutes > 0 ? "pending" : "active" };
    if (open.status === "pending") return now - (open.pendingSince ?? now) >= minutes(d.forMinutes) ? { kind: "activate" } : { kind: "hold" };
    return { kind: "hold" };
  }
  if (!open) return { kind: "none" };
  if (open.status === "pending") return { kind: "drop" };
  const since = open.clearingSince ?? now;
  return now - since >= minutes(d.clearDelayMinutes) ? { kind: "clear" } : { kind: "clearing", since };
}
