/**
 * The dampers end to end (#47 item 9): a real monitored server, the real collector, alerter and delivery, a real
 * webhook receiver. A rule with `for` 2 min and a clear delay of 1 min: the alert is pending (visible, not
 * notified) until the condition has held; it stays open through the delay; each step is notified once. Minutes
 * pass by moving the alert's own clocks back in the datastore.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { alertAndDeliver } from "../../src/alerts/alerter.ts";
import { collectOnce } from "../../src/collector/collect.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { collectEvery, monitoringConfig, pause, quietLog as log, registerServer } from "../support/monitored.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";
import { startHttpReceiver } from "../support/receivers.ts";

const config = { ...monitoringConfig, alerter: { enabled: true, interval_seconds: 1 } };
let server: TestServer;
let store: TestDatastore;
let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
let api: ReturnType<typeof client>;
let root: string;
let conn: number;

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  store = await migratedDatastore("pglite");
  receiver = await startHttpReceiver();
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  conn = await registerServer(store.db, "damped", server.url);
  await collectEvery(store.db, 1);
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await store?.close();
  await server?.stop();
});

async function round() {
  await pause(1100);
  await collectOnce(store.db, config, log);
  await alertAndDeliver(store.db, config, log, {});
}
const events = () => receiver.requests.map((r) => (JSON.parse(r.body) as { event: string }).event);
const alertsOf = async (status: string) =>
  (await api("GET", `/api/v1/alerts?status=${status}&connection_id=${conn}`, { token: root })).body.alerts as Array<{ id: number; status: string }>;

it("holds a new alert pending for `for`, then fires once; holds it open through the clear delay, then clears once", { timeout: 90_000 }, async () => {
  await api("POST", "/api/v1/notification-channels", {
    token: root,
    body: { channel_type: "webhook", name: "ops", endpoint_url: `${receiver.url}/hook`, is_estate_default: true },
  });
  const [rule] = await store.db.query<{ id: number }>("SELECT id FROM alert_rules WHERE name = 'session_count_anomaly'");
  const put = await api("PUT", `/api/v1/alert-overrides/server/${conn}/${rule.id}`, {
    token: root,
    body: { operator: ">=", threshold: 1, severity: "warning", enabled: true, for_minutes: 2, clear_delay_minutes: 1 },
  });
  expect(put.status).toBe(200);

  const session = new pg.Client({ connectionString: server.url, application_name: "someone" });
  await session.connect();
  await round();
  await round();
  expect(await alertsOf("pending")).toHaveLength(1);
  expect(events()).toEqual([]);
  const timeline = async () =>
    (
      await api(
        "GET",
        `/api/v1/timeline/events?start_time=${new Date(Date.now() - 3_600_000).toISOString()}&end_time=${new Date().toISOString()}&connection_id=${conn}&event_types=alert_fired`,
        { token: root },
      )
    ).body.events as unknown[];
  expect(await timeline()).toEqual([]); // pending has not fired
  await store.db.query("UPDATE alerts SET pending_since = pending_since - interval '2 minutes' WHERE status = 'pending'");
  await round();
  await round();
  expect(events()).toEqual(["alert_fire"]);
  expect(await alertsOf("active")).toHaveLength(1);
  expect(await timeline()).toHaveLength(1);

  await session.end();
  await round();
  await round();
  expect(events()).toEqual(["alert_fire"]); // the condition stopped, the clear delay holds it open
  const [open] = await alertsOf("active");
  expect(open).toBeDefined();
  await store.db.query("UPDATE alerts SET clearing_since = clearing_since - interval '1 minute' WHERE clearing_since IS NOT NULL");
  await round();
  expect(events()).toEqual(["alert_fire", "alert_clear"]);
  expect(await alertsOf("active")).toEqual([]);
});
