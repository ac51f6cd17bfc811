/** The alerter's pure round: fire, update, reactivate, clear, cooldown, connection errors, blackouts. */
import { describe, expect, it } from "vitest";
import type { Reading } from "../../src/vocabulary/alert-metrics.ts";
import { type RoundConnection, type RoundInput, type RoundRule, evaluateRound } from "../../src/alerts/evaluate-round.ts";
import { type OpenAlert, alertKey } from "../../src/vocabulary/alert-records.ts";

const rule: RoundRule = {
  id: 1,
  name: "long_running_queries",
  description: "A statement runs long",
  metric_name: "pg_stat_activity.max_query_duration_seconds",
  default_operator: ">",
  default_threshold: 600,
  default_severity: "warning",
  default_enabled: true,
  available: true,
};
const conn: RoundConnection = { connectionId: 5, clusterId: null, groupId: null, name: "prod", error: null, blackedOut: false };
const key = { alert_type: "threshold" as const, rule_id: 1, metric_name: rule.metric_name, connection_id: 5, database_name: "", object_name: "" };

function input(value: number | null, extra: Partial<RoundInput> = {}): RoundInput {
  const readings: Reading[] = value === null ? [] : [{ database_name: "", object_name: "", value }];
  return {
    rules: [rule],
    overrides: [],
    connections: [conn],
    readings: new Map([[5, new Map([[rule.metric_name, readings]])]]),
    open: [],
    recentlyCleared: new Set(),
    ...extra,
  };
}
const open = (fields: Partial<OpenAlert> = {}): OpenAlert => ({
  ...key,
  id: 42,
  status: "active",
  severity: "warning",
  description: rule.description,
  ...fields,
});

describe("evaluateRound", () => {
  it("raises a threshold alert when the rule is violated and none is open", () => {
    const { raise, update, clear } = evaluateRound(input(700));
    expect(raise).toEqual([
      {
        ...key,
        metric_value: 700,
        threshold_value: 600,
        operator: ">",
        severity: "warning",
        title: "long_running_queries",
        description: rule.description,
        status: "active",
      },
    ]);
    expect(update).toEqual([]);
    expect(clear).toEqual([]);
  });

  it("does nothing at the threshold, or without a value", () => {
    expect(evaluateRound(input(600))).toEqual({ raise: [], update: [], clear: [], clearing: [] });
    expect(evaluateRound(input(null))).toEqual({ raise: [], update: [], clear: [], clearing: [] });
  });

  it("updates the open alert instead of raising another; an acknowledged one comes back only when its severity changes", () => {
    expect(evaluateRound(input(900, { open: [open()] })).update).toEqual([
      {
        id: 42,
        metric_value: 900,
        threshold_value: 600,
        operator: ">",
        severity: "warning",
        description: rule.description,
        reactivate: false,
        activate: false,
        resetClearing: false,
      },
    ]);
    expect(evaluateRound(input(900, { open: [open({ status: "acknowledged" })] })).update[0].reactivate).toBe(false);
    const critical = {
      rule_id: 1,
      scope: "server" as const,
      scope_id: 5,
      database_name: "",
      operator: ">" as const,
      threshold: 600,
      severity: "critical" as const,
      enabled: true,
    };
    const changed = evaluateRound(input(900, { open: [open({ status: "acknowledged" })], overrides: [critical] }));
    expect(changed.update[0]).toMatchObject({ severity: "critical", reactivate: true });
    expect(changed.raise).toEqual([]);
  });

  it("clears an open alert whose rule is no longer violated, has no value, or is disabled where it fires, saying which and with the value now", () => {
    expect(evaluateRound(input(10, { open: [open()] })).clear).toEqual([{ id: 42, reason: "back within the threshold", value: 10 }]);
    expect(evaluateRound(input(null, { open: [open()] })).clear).toEqual([
      { id: 42, reason: "no current value (the data is stale or the object is gone)", value: null },
    ]);
    const off = {
      rule_id: 1,
      scope: "server" as const,
      scope_id: 5,
      database_name: "",
      operator: ">" as const,
      threshold: 600,
      severity: "warning" as const,
      enabled: false,
    };
    expect(evaluateRound(input(900, { open: [open()], overrides: [off] }))).toEqual({
      raise: [],
      update: [],
      clear: [{ id: 42, reason: "the rule was disabled", value: null }],
      clearing: [],
    });
    expect(evaluateRound({ ...input(900, { open: [open()] }), rules: [{ ...rule, available: false }] }).clear).toEqual([
      { id: 42, reason: "the rule is no longer evaluated", value: null },
    ]);
  });

  it("does not raise again within the cooldown of a cleared alert", () => {
    expect(evaluateRound(input(900, { recentlyCleared: new Set([alertKey(key)]) })).raise).toEqual([]);
  });

  it("skips rules pglens cannot evaluate", () => {
    expect(evaluateRound({ ...input(900), rules: [{ ...rule, available: false }] }).raise).toEqual([]);
  });

  it("keeps one connection alert per erroring connection, updated with the error and cleared when it is gone", () => {
    const failing = { ...conn, error: "cannot reach connection 5: ECONNREFUSED" };
    const first = evaluateRound({ ...input(null), connections: [failing] });
    expect(first.raise).toEqual([
      {
        alert_type: "connection",
        rule_id: null,
        metric_name: "",
        connection_id: 5,
        database_name: "",
        object_name: "",
        metric_value: null,
        threshold_value: null,
        operator: null,
        severity: "critical",
        title: "Connection error: prod",
        description: failing.error,
        status: "active",
      },
    ]);
    const existing = open({ id: 9, alert_type: "connection", rule_id: null, metric_name: "", severity: "critical", description: "old text" });
    expect(evaluateRound({ ...input(null), connections: [failing], open: [existing] }).update).toMatchObject([
      { id: 9, description: failing.error, reactivate: false },
    ]);
    expect(evaluateRound({ ...input(null), open: [existing] }).clear).toEqual([{ id: 9, reason: "the server is reachable again", value: null }]);
  });

  it("lets the connection alert speak for an unreachable server instead of one staleness alert per probe", () => {
    const staleness: RoundRule = {
      ...rule,
      id: 2,
      name: "metric_staleness",
      metric_name: "probe_staleness_ratio",
      default_operator: ">",
      default_threshold: 3,
    };
    const readings = new Map([
      [
        5,
        new Map([
          [
            "probe_staleness_ratio",
            [
              { database_name: "", object_name: "pg_stat_database", value: 12 },
              { database_name: "", object_name: "pg_settings", value: 8 },
            ],
          ],
        ]),
      ],
    ]);
    const reachable = evaluateRound({ ...input(null), rules: [staleness], readings });
    expect(reachable.raise.map((a) => a.object_name)).toEqual(["pg_stat_database", "pg_settings"]);
    const down = evaluateRound({ ...input(null), rules: [staleness], readings, connections: [{ ...conn, error: "cannot reach connection 5: ECONNREFUSED" }] });
    expect(down.raise.map((a) => a.alert_type)).toEqual(["connection"]);
  });

  it("raises nothing new inside a blackout, but still updates and clears what is open", () => {
    const quiet = { ...conn, blackedOut: true, error: "down" };
    expect(evaluateRound({ ...input(900), connections: [quiet] })).toEqual({ raise: [], update: [], clear: [], clearing: [] });
    const during = evaluateRound({ ...input(900, { open: [open(), open({ id: 3, object_name: "gone" })] }), connections: [quiet] });
    expect(during.update.map((u) => u.id)).toEqual([42]);
    expect(during.clear.map((c) => c.id)).toEqual([3]);
  });

  it("silences only the database a server blackout names", () => {
    const readings = new Map([
      [
        5,
        new Map([
          [
            rule.metric_name,
            [
              { database_name: "app", object_name: "", value: 700 },
              { database_name: "web", object_name: "", value: 700 },
            ],
          ],
        ]),
      ],
    ]);
    const { raise } = evaluateRound({ ...input(null), readings, connections: [{ ...conn, blackedOutDatabases: new Set(["app"]) }] });
    expect(raise.map((a) => a.database_name)).toEqual(["web"]);
  });

  it("keys alerts by database and object, and names them in the title", () => {
    const readings = new Map([
      [
        5,
        new Map([
          [
            rule.metric_name,
            [
              { database_name: "app", object_name: "public.t", value: 700 },
              { database_name: "app", object_name: "public.u", value: 800 },
            ],
          ],
        ]),
      ],
    ]);
    const { raise } = evaluateRound({ ...input(null), readings });
    expect(raise.map((a) => [a.database_name, a.object_name, a.title])).toEqual([
      ["app", "public.t", "long_running_queries: app / public.t"],
      ["app", "public.u", "long_running_queries: app / public.u"],
    ]);
  });

  it("raises anomaly alerts from candidates and clears them only in a round that checked anomalies", () => {
    const baseline = { period_type: "hourly" as const, period_value: 3, mean: 1, stddev: 0.1, min: 0.8, max: 1.2, p50: 1, p95: 1.2, p99: 1.2, sample_count: 7 };
    const candidate = {
      connection_id: 5,
      database_name: "app",
      metric_name: "pg_stat_database.xact_commit_per_sec",
      value: 100,
      anomaly: { z: 990, severity: "critical" as const, baseline },
    };
    const [raised] = evaluateRound({ ...input(null), anomalies: [candidate] }).raise;
    expect(raised).toMatchObject({
      alert_type: "anomaly",
      rule_id: null,
      metric_name: candidate.metric_name,
      database_name: "app",
      severity: "critical",
      anomaly_score: 990,
      title: "Anomaly: pg_stat_database.xact_commit_per_sec (app)",
    });
    const existing = open({ id: 8, alert_type: "anomaly", rule_id: null, metric_name: candidate.metric_name, database_name: "app" });
    expect(evaluateRound({ ...input(null), open: [existing] }).clear).toEqual([]);
    expect(evaluateRound({ ...input(null), open: [existing], anomalies: [] }).clear).toEqual([{ id: 8, reason: "back within its normal range", value: null }]);
  });
});
