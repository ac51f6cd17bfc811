/**
 * The dampers as people meet them: sequences of readings, one round a minute, through the alerter's pure round,
 * counting what would be notified. `for` keeps a flapping condition quiet until it holds; the clear delay keeps
 * an alert open through short dips; both off keeps today's behaviour.
 */
import { describe, expect, it } from "vitest";
import { damperStep } from "../../src/alerts/dampers.ts";
import { type RoundInput, type RoundRule, evaluateRound } from "../../src/alerts/evaluate-round.ts";
import type { OpenAlert } from "../../src/vocabulary/alert-records.ts";

const MINUTE = 60_000;
const T0 = Date.parse("2026-11-28T10:00:00Z");

/** Runs one round a minute over `values` (null: no reading); answers what was notified, round by round. */
function notices(
  values: Array<number | null>,
  dampers: { for?: number; clearDelay?: number },
  override?: { for_minutes?: number | null; clear_delay_minutes?: number | null },
) {
  const rule: RoundRule = {
    id: 1,
    name: "sessions",
    description: "too many sessions",
    metric_name: "pg_stat_activity.count",
    default_operator: ">",
    default_threshold: 1,
    default_severity: "warning",
    default_enabled: true,
    available: true,
    default_for_minutes: dampers.for ?? 0,
    default_clear_delay_minutes: dampers.clearDelay ?? 0,
  };
  const overrides = override
    ? [
        {
          rule_id: 1,
          scope: "server" as const,
          scope_id: 5,
          database_name: "",
          operator: ">" as const,
          threshold: 1,
          severity: "warning" as const,
          enabled: true,
          ...override,
        },
      ]
    : [];
  let open: OpenAlert[] = [];
  let nextId = 1;
  const said: string[] = [];
  values.forEach((value, minute) => {
    const now = T0 + minute * MINUTE;
    const input: RoundInput = {
      rules: [rule],
      overrides,
      now,
      recentlyCleared: new Set(),
      open,
      connections: [{ connectionId: 5, clusterId: null, groupId: null, name: "prod", error: null, blackedOut: false }],
      readings: new Map([[5, new Map([[rule.metric_name, value === null ? [] : [{ database_name: "", object_name: "", value }]]])]]),
    };
    const changes = evaluateRound(input);
    for (const r of changes.raise) {
      open.push({ ...r, id: nextId++, pending_since: r.status === "pending" ? new Date(now) : null, clearing_since: null });
      if (r.status === "active") said.push(`${minute}:fire`);
    }
    for (const u of changes.update) {
      const a = open.find((o) => o.id === u.id)!;
      if (u.activate && a.status === "pending") (a.status = "active"), (a.pending_since = null), said.push(`${minute}:fire`);
      if (u.resetClearing) a.clearing_since = null;
    }
    for (const c of changes.clearing) open.find((o) => o.id === c.id)!.clearing_since = new Date(c.since);
    for (const c of changes.clear) {
      open = open.filter((o) => o.id !== c.id);
      if (!c.silent) said.push(`${minute}:clear`);
    }
  });
  return { said, open };
}

describe("dampers over sequences of readings", () => {
  it("off (the default): fire and clear at once, as before", () => {
    expect(notices([5, 0, 5, 0], {}).said).toEqual(["0:fire", "1:clear", "2:fire", "3:clear"]);
  });

  it("for 5 min: pending (not notified) until the condition has held 5 minutes", () => {
    const { said, open } = notices([5, 5, 5, 5, 5], { for: 5 });
    expect(said).toEqual([]);
    expect(open.map((o) => o.status)).toEqual(["pending"]);
    expect(notices([5, 5, 5, 5, 5, 5, 0], { for: 5 }).said).toEqual(["5:fire", "6:clear"]);
  });

  it("for 5 min: a flapping condition is never notified", () => {
    const flapping = Array.from({ length: 40 }, (_, i) => (i % 8 < 3 ? 5 : 0)); // 5 times over 40 minutes, 3 minutes each
    expect(notices(flapping, {}).said).toHaveLength(10);
    const { said, open } = notices(flapping, { for: 5 });
    expect(said).toEqual([]);
    expect(open).toEqual([]);
  });

  it("clear delay 3 min: stays open through a short dip, clears after 3 minutes below", () => {
    expect(notices([5, 0, 5, 0, 0, 0, 0, 0], { clearDelay: 3 }).said).toEqual(["0:fire", "6:clear"]);
    expect(notices([5, 0, 0, 5, 0, 0, 0, 0], { clearDelay: 3 }).said).toEqual(["0:fire", "7:clear"]); // the delay starts over after a new breach
  });

  it("no reading counts as the condition false, for the clear delay too", () => {
    expect(notices([5, null, null, null], { clearDelay: 2 }).said).toEqual(["0:fire", "3:clear"]);
  });

  it("an override's dampers win where it applies; its null inherits the rule's", () => {
    expect(notices([5, 5, 5, 0], { for: 5 }, { for_minutes: 2 }).said).toEqual(["2:fire", "3:clear"]);
    expect(notices([5, 5, 5, 0], { for: 2 }, { for_minutes: null }).said).toEqual(["2:fire", "3:clear"]);
    expect(notices([5, 0, 0], { clearDelay: 5 }, { clear_delay_minutes: 0 }).said).toEqual(["0:fire", "1:clear"]);
  });
});

describe("damperStep", () => {
  const d = { forMinutes: 2, clearDelayMinutes: 2 };
  it.each([
    [undefined, true, { kind: "raise", status: "pending" }],
    [undefined, false, { kind: "none" }],
    [{ status: "pending", pendingSince: T0, clearingSince: null }, true, { kind: "hold" }],
    [{ status: "pending", pendingSince: T0 - 2 * MINUTE, clearingSince: null }, true, { kind: "activate" }],
    [{ status: "pending", pendingSince: T0, clearingSince: null }, false, { kind: "drop" }],
    [{ status: "active", pendingSince: null, clearingSince: null }, false, { kind: "clearing", since: T0 }],
    [{ status: "acknowledged", pendingSince: null, clearingSince: T0 - MINUTE }, false, { kind: "clearing", since: T0 - MINUTE }],
    [{ status: "active", pendingSince: null, clearingSince: T0 - 2 * MINUTE }, false, { kind: "clear" }],
    [{ status: "active", pendingSince: null, clearingSince: T0 - MINUTE }, true, { kind: "hold" }],
  ] as const)("%j, violating %s -> %j", (open, violating, step) => {
    expect(damperStep(open, violating, d, T0)).toEqual(step);
  });
});
