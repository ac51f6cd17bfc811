/**
 * The alerter end to end on real PostgreSQL: a monitored server whose state the test changes (a long query,
 * an override, an unreachable port) drives alerts through fire -> update -> ack -> reactivate -> clear ->
 * cooldown, through the collector, the alerter and the REST API.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateAndApply } from "../../src/alerts/alerter.ts";
import { collectOnce } from "../../src/collector/collect.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { collectEvery, registerServer, monitoringConfig as config, quietLog as log, pause } from "../support/monitored.ts";
import { freePort, startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

let server: TestServer;
let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let conn: number;
let ruleId: number;

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  conn = await registerServer(store.db, "monitored", server.url);
  await collectEvery(store.db, 1);
  ruleId = (await store.db.query<{ id: number }>("SELECT id FROM alert_rules WHERE name = 'long_running_queries'"))[0].id;
}, 60_000);
afterAll(async () => {
  await store?.close();
  await server?.stop();
});

/** A statement that runs until cancelled, in a session of its own. */
async function longQuery(): Promise<{ stop(): Promise<void> }> {
  const session = new pg.Client({ connectionString: server.url, application_name: "alerter-test-sleeper" });
  await session.connect();
  const running = session.query("SELECT pg_sleep(600)").catch(() => {});
  return {
    async stop() {
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      await admin.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'alerter-test-sleeper'");
      await admin.end();
      await running;
      await session.end();
    },
  };
}

/** Collect fresh samples (waiting out the 1 s interval), then one alerter round. */
async function collectAndEvaluate() {
  await pause(1100);
  await collectOnce(store.db, config, log);
  return evaluateAndApply(store.db);
}

const alerts = async (query = "") => (await api("GET", `/api/v1/alerts?connection_id=${conn}${query}`, { token: root })).body;

describe("the alerter on a live server", () => {
  it("seeds the built-in rules and says which it cannot evaluate", async () => {
    const rules = (await api("GET", "/api/v1/alert-rules", { token: root })).body;
    expect(rules).toHaveLength(34);
    expect(rules.find((r: { name: string }) => r.name === "spock_recent_exceptions_high")).toMatchObject({
      available: false,
      unavailable_reason: expect.stringContaining("Spock"),
    });
    // Without system_stats on any server, its rules say which extension they need and how to install it.
    for (const name of ["cpu_usage_high", "memory_usage_high", "load_average_high", "disk_usage_percent"])
      expect(rules.find((r: { name: string }) => r.name === name)).toMatchObject({
        available: false,
        unavailable_reason: expect.stringMatching(/needs the system_stats extension.*CREATE EXTENSION system_stats/),
      });
    // The table bloat estimate needs no extension: its rule can fire.
    expect(rules.find((r: { name: string }) => r.name === "table_bloat_ratio")).toMatchObject({ available: true, unavailable_reason: null });
    expect(rules.find((r: { name: string }) => r.name === "long_running_queries")).toMatchObject({
      available: true,
      default_threshold: 600,
      metric_unit: "seconds",
    });
    expect((await api("PUT", `/api/v1/alert-rules/${ruleId}`, { token: root, body: { default_operator: "=>" } })).status).toBe(400);
  });

  it("fires, updates, is acknowledged, reactivates on a new severity, clears, and honours the cooldown", async () => {
    // Lower the threshold for this server: a query running over 2 s.
    const put = await api("PUT", `/api/v1/alert-overrides/server/${conn}/${ruleId}`, {
      token: root,
      body: { operator: ">", threshold: 2, severity: "warning", enabled: true },
    });
    expect(put).toMatchObject({ status: 200, body: { status: "ok" } });
    const sleeper = await longQuery();
    await pause(2500);
    const fired = await collectAndEvaluate();
    expect(fired.raised).toHaveLength(1);
    let [alert] = (await alerts("&alert_type=threshold")).alerts;
    expect(alert).toMatchObject({
      rule_id: ruleId,
      status: "active",
      severity: "warning",
      threshold_value: 2,
      operator: ">",
      server_name: "monitored",
      metric_unit: "seconds",
      title: "long_running_queries",
    });
    expect(alert.metric_value).toBeGreaterThan(2);

    // A second round updates the same alert.
    const again = await collectAndEvaluate();
    expect(again.raised).toEqual([]);
    const updated = (await alerts("&alert_type=threshold")).alerts;
    expect(updated).toHaveLength(1);
    expect(updated[0].metric_value).toBeGreaterThan(alert.metric_value);

    // Acknowledged: stays acknowledged while the severity holds.
    expect((await api("POST", "/api/v1/alerts/acknowledge", { token: root, body: { alert_id: alert.id, message: "looking" } })).body).toEqual({
      status: "acknowledged",
    });
    expect((await api("POST", "/api/v1/alerts/acknowledge", { token: root, body: { alert_id: alert.id } })).status).toBe(409);
    await collectAndEvaluate();
    [alert] = (await alerts("&alert_type=threshold")).alerts;
    expect(alert).toMatchObject({ status: "acknowledged", acknowledged_by: "root", ack_message: "looking" });

    // The severity changes: active again, acknowledgment gone.
    await api("PUT", `/api/v1/alert-overrides/server/${conn}/${ruleId}`, {
      token: root,
      body: { operator: ">", threshold: 2, severity: "critical", enabled: true },
    });
    await collectAndEvaluate();
    [alert] = (await alerts("&alert_type=threshold")).alerts;
    expect(alert).toMatchObject({ status: "active", severity: "critical", acknowledged_by: null });

    // The query ends: cleared.
    await sleeper.stop();
    const ended = await collectAndEvaluate();
    expect(ended.cleared).toEqual([alert.id]);
    [alert] = (await alerts("&alert_type=threshold")).alerts;
    expect(alert.status).toBe("cleared");
    expect(alert.cleared_at).not.toBeNull();
    expect((await api("DELETE", `/api/v1/alerts/acknowledge?alert_id=${alert.id}`, { token: root })).status).toBe(409);

    // Violated again within the cooldown: no new alert; once the cooldown is over, a new one.
    const second = await longQuery();
    await pause(2500);
    expect((await collectAndEvaluate()).raised).toEqual([]);
    await store.db.query("UPDATE alerter_settings SET cooldown_seconds = 0");
    expect((await collectAndEvaluate()).raised).toHaveLength(1);
    await second.stop();
    expect((await alerts("&exclude_cleared=true&alert_type=threshold")).total).toBe(1);
    expect((await api("GET", "/api/v1/alerts/counts", { token: root })).body).toEqual({ total: 1, by_server: { [conn]: 1 } });
  }, 60_000);

  it("raises one connection alert for an unreachable server and clears it when the server answers again", async () => {
    const dead = await freePort();
    const broken = await registerServer(store.db, "broken", server.url.replace(/:\d+\//, `:${dead}/`));
    await collectOnce(store.db, config, log);
    await evaluateAndApply(store.db);
    await evaluateAndApply(store.db);
    const open = (await api("GET", `/api/v1/alerts?connection_id=${broken}&alert_type=connection&exclude_cleared=true`, { token: root })).body;
    expect(open.total).toBe(1);
    expect(open.alerts[0]).toMatchObject({ severity: "critical", title: "Connection error: broken", description: expect.stringContaining(`${dead}`) });

    await store.db.query("UPDATE connections SET port = $2 WHERE id = $1", [broken, Number(new URL(server.url).port)]);
    await store.db.query("DELETE FROM connection_health");
    await collectOnce(store.db, config, log);
    const round = await evaluateAndApply(store.db);
    expect(round.cleared).toContain(open.alerts[0].id);
  }, 30_000);
});
