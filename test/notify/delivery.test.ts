/**
 * Delivery end to end on real PostgreSQL: an alert fired by the alerter on a real monitored server reaches a
 * real webhook receiver once with 3 pglens instances running, its clear arrives once, a blackout suppresses
 * both; failed sends are retried and recorded in the history.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { alertAndDeliver } from "../../src/alerts/alerter.ts";
import { collectOnce } from "../../src/collector/collect.ts";
import { type Config, resolveConfig } from "../../src/config.ts";
import { deliverOnce } from "../../src/notify/deliver.ts";
import { nodeTransports } from "../../src/notify/node-transports.ts";
import { queueNotifications } from "../../src/notify/queue.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { TEST_SECRET, collectEvery, registerServer, quietLog as log, pause } from "../support/monitored.ts";
import { freePort, startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";
import { startHttpReceiver, startSmtpReceiver } from "../support/receivers.ts";

const config: Config = { ...resolveConfig({}, { PGLENS_SECRET: TEST_SECRET }), alerter: { enabled: true, interval_seconds: 1 } };

let server: TestServer;
let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let conn: number;
let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
let instances: Driver[];

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  conn = await registerServer(store.db, "monitored", server.url);
  await collectEvery(store.db, 1);
  receiver = await startHttpReceiver((req, _n, res) => (req.path === "/flaky" && flaky++ < 2 ? res.writeHead(503).end("busy") : res.end("ok")));
  instances = Array.from({ length: 3 }, () => openPg(store.url!));
}, 60_000);
afterAll(async () => {
  await Promise.all(instances?.map((d) => d.close()) ?? []);
  await receiver?.close();
  await store?.close();
  await server?.stop();
});
let flaky = 0;

/** Collect, then one round on each of the 3 instances at once (alerter + delivery). */
async function round() {
  await pause(1100);
  await collectOnce(store.db, config, log);
  await Promise.all(instances.map((d) => alertAndDeliver(d, config, log, {})));
}

const events = () =>
  receiver.requests.filter((r) => r.path === "/hook").map((r) => JSON.parse(r.body) as { event: string; alert_id: number; server: { name: string } });

describe("delivery", () => {
  it("sends an alert's fire and clear once each with 3 instances, and nothing inside a blackout", async () => {
    const hook = await api("POST", "/api/v1/notification-channels", {
      token: root,
      body: { channel_type: "webhook", name: "ops", endpoint_url: `${receiver.url}/hook`, is_estate_default: true },
    });
    expect(hook.status).toBe(201);
    // Alert on any client session beyond pglens's own.
    const [rule] = await store.db.query<{ id: number }>("SELECT id FROM alert_rules WHERE name = 'session_count_anomaly'");
    await api("PUT", `/api/v1/alert-overrides/server/${conn}/${rule.id}`, {
      token: root,
      body: { operator: ">=", threshold: 1, severity: "warning", enabled: true },
    });

    const session = new pg.Client({ connectionString: server.url, application_name: "someone" });
    await session.connect();
    await round();
    await round(); // still firing: an update, not a new notice
    expect(events().map((e) => e.event)).toEqual(["alert_fire"]);
    expect(events()[0].server.name).toBe("monitored");
    await session.end();
    await round();
    await round();
    expect(events().map((e) => e.event)).toEqual(["alert_fire", "alert_clear"]);
    expect(new Set(events().map((e) => e.alert_id)).size).toBe(1);
    // The clear says what cleared it, with the value now, apart from the value it fired with.
    const [fired, resolved] = receiver.requests.filter((r) => r.path === "/hook").map((r) => JSON.parse(r.body));
    expect(resolved.resolution).toMatchObject({ reason: "back within the threshold", value: expect.any(Number) });
    expect(resolved.resolution.value).toBeLessThan(1);
    expect(resolved.metric.value).toBe(fired.metric.value);

    // A blackout on the server: the next session raises nothing, so nothing is sent.
    const window = (
      await api("POST", "/api/v1/blackouts", {
        token: root,
        body: {
          scope: "server",
          connection_id: conn,
          reason: "maintenance",
          start_time: new Date(Date.now() - 1000).toISOString(),
          end_time: new Date(Date.now() + 3_600_000).toISOString(),
        },
      })
    ).body;
    await store.db.query("UPDATE alerter_settings SET cooldown_seconds = 0");
    const again = new pg.Client({ connectionString: server.url, application_name: "someone" });
    await again.connect();
    await round();
    expect(events()).toHaveLength(2);
    // After the window, it fires; its clear inside a new window is still sent (#47 item 6): the receiver was told
    // of the fire, and an incident tool would otherwise hold an incident that never resolves.
    await api("POST", `/api/v1/blackouts/${window.id}/stop`, { token: root });
    await round();
    expect(events().map((e) => e.event)).toEqual(["alert_fire", "alert_clear", "alert_fire"]);
    await api("POST", "/api/v1/blackouts", {
      token: root,
      body: {
        scope: "server",
        connection_id: conn,
        reason: "maintenance",
        start_time: new Date(Date.now() - 1000).toISOString(),
        end_time: new Date(Date.now() + 3_600_000).toISOString(),
      },
    });
    await again.end();
    await round();
    expect(events().map((e) => e.event)).toEqual(["alert_fire", "alert_clear", "alert_fire", "alert_clear"]);
    expect(events()[3].alert_id).toBe(events()[2].alert_id);
    const history = (await api("GET", `/api/v1/notification-channels/${hook.body.id}/history`, { token: root })).body;
    expect(history.map((h: { kind: string; status: string }) => `${h.kind}:${h.status}`)).toEqual([
      "alert_clear:sent",
      "alert_fire:sent",
      "alert_clear:sent",
      "alert_fire:sent",
    ]);
    // A fire that was suppressed inside a window (queued just before it began) keeps its clear quiet too.
    const [quietAlert] = await store.db.query<{ id: number }>(
      "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name, object_name) VALUES ('threshold', $1, 'warning', 'queued before the window', 'active', 'm', 'quiet') RETURNING id::int AS id",
      [conn],
    );
    await queueNotifications(store.db, [{ alert_id: quietAlert.id, kind: "alert_fire", sequence: 1 }]);
    await deliverOnce(store.db, config, log, {});
    await queueNotifications(store.db, [{ alert_id: quietAlert.id, kind: "alert_clear", sequence: 0 }]);
    await deliverOnce(store.db, config, log, {});
    expect(events()).toHaveLength(4);
    const quiet = (await api("GET", `/api/v1/notification-channels/${hook.body.id}/history?limit=2`, { token: root })).body;
    expect(quiet.map((h: { kind: string; status: string; alert_id: number }) => `${h.kind}:${h.status}:${h.alert_id}`)).toEqual([
      `alert_clear:suppressed:${quietAlert.id}`,
      `alert_fire:suppressed:${quietAlert.id}`,
    ]);
  }, 60_000);

  it("retries a failing receiver, then records the outcome; gives up after the last attempt", async () => {
    await store.db.query("DELETE FROM blackouts");
    const quick: Config = { ...config, notifications: { ...config.notifications, retry_minutes: [0], max_attempts: 3 } };
    const flakyHook = (
      await api("POST", "/api/v1/notification-channels", {
        token: root,
        body: { channel_type: "webhook", name: "flaky", endpoint_url: `${receiver.url}/flaky` },
      })
    ).body;
    const deadHook = (
      await api("POST", "/api/v1/notification-channels", {
        token: root,
        body: { channel_type: "webhook", name: "dead", endpoint_url: `http://127.0.0.1:${await freePort()}/x` },
      })
    ).body;
    await store.db.query("UPDATE notification_channels SET is_estate_default = (id = ANY($1::int[]))", [[flakyHook.id, deadHook.id]]);
    const [alert] = await store.db.query<{ id: number }>("SELECT id::int AS id FROM alerts ORDER BY id LIMIT 1");
    expect(await queueNotifications(store.db, [{ alert_id: alert.id, kind: "reminder", sequence: 99 }])).toBe(2);
    for (let i = 0; i < 4; i++) await deliverOnce(store.db, quick, log, {});
    const flakyHistory = (await api("GET", `/api/v1/notification-channels/${flakyHook.id}/history`, { token: root })).body;
    expect(flakyHistory).toMatchObject([{ kind: "reminder", status: "sent", attempts: 3, last_error: null }]);
    expect(receiver.requests.filter((r) => r.path === "/flaky")).toHaveLength(3);
    const deadHistory = (await api("GET", `/api/v1/notification-channels/${deadHook.id}/history?limit=5`, { token: root })).body;
    expect(deadHistory).toMatchObject([{ status: "failed", attempts: 3, last_error: expect.stringContaining("could not reach it: ECONNREFUSED") }]);
  });

  it("reminds while an alert stays active, once per interval, and says why email cannot leave a runtime without SMTP", async () => {
    await store.db.query("DELETE FROM notifications");
    await store.db.query("UPDATE notification_channels SET is_estate_default = false");
    const reminding = (
      await api("POST", "/api/v1/notification-channels", {
        token: root,
        body: {
          channel_type: "webhook",
          name: "reminding",
          endpoint_url: `${receiver.url}/hook`,
          reminder_enabled: true,
          reminder_interval_hours: 1,
          is_estate_default: true,
        },
      })
    ).body;
    const [alert] = await store.db.query<{ id: number }>(
      "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name, object_name) VALUES ('threshold', $1, 'warning', 'still bad', 'active', 'm', 'reminder-test') RETURNING id::int AS id",
      [conn],
    );
    await store.db.query(
      "INSERT INTO notifications (channel_id, alert_id, kind, sequence, status, sent_at) VALUES ($1, $2, 'alert_fire', 1, 'sent', now() - interval '2 hours')",
      [reminding.id, alert.id],
    );
    const { queueReminders } = await import("../../src/notify/queue.ts");
    expect(await queueReminders(store.db)).toBe(1);
    expect(await queueReminders(store.db)).toBe(0); // one is already waiting
    const before = events().length;
    await deliverOnce(store.db, config, log, {});
    expect(
      events()
        .slice(before)
        .map((e) => [e.event, e.alert_id]),
    ).toEqual([["reminder", alert.id]]);
    expect(await queueReminders(store.db)).toBe(0); // just reminded: the next is an hour away

    const mail = (
      await api("POST", "/api/v1/notification-channels", {
        token: root,
        body: { channel_type: "email", name: "mail", smtp_host: "127.0.0.1", from_address: "pglens@example.com", is_estate_default: true },
      })
    ).body;
    await api("POST", `/api/v1/notification-channels/${mail.id}/recipients`, { token: root, body: { email_address: "dba@example.com" } });
    await queueNotifications(store.db, [{ alert_id: alert.id, kind: "alert_fire", sequence: 5 }]);
    await deliverOnce(store.db, config, log, {}); // no email transport, as on Workers
    const [attempt] = (await api("GET", `/api/v1/notification-channels/${mail.id}/history`, { token: root })).body;
    expect(attempt).toMatchObject({ status: "retrying", last_error: expect.stringContaining("email cannot be sent from this runtime") });
  });

  it("emails an alert through a real SMTP server: subject, both parts, recipients", async () => {
    const smtp = await startSmtpReceiver();
    try {
      await store.db.query("UPDATE notification_channels SET is_estate_default = false");
      const mail = (
        await api("POST", "/api/v1/notification-channels", {
          token: root,
          body: {
            channel_type: "email",
            name: "smtp",
            smtp_host: "127.0.0.1",
            smtp_port: smtp.port,
            smtp_use_tls: false,
            from_address: "pglens@example.com",
            from_name: "pglens",
            is_estate_default: true,
          },
        })
      ).body;
      for (const address of ["dba@example.com", "oncall@example.com"])
        await api("POST", `/api/v1/notification-channels/${mail.id}/recipients`, { token: root, body: { email_address: address } });
      const [alert] = await store.db.query<{ id: number }>(
        "INSERT INTO alerts (alert_type, connection_id, severity, title, description, status, metric_name, object_name) VALUES ('threshold', $1, 'critical', 'disk_usage_critical', 'A file system is almost full', 'active', 'm', 'mail-test') RETURNING id::int AS id",
        [conn],
      );
      await queueNotifications(store.db, [{ alert_id: alert.id, kind: "alert_fire", sequence: 1 }]);
      expect(await deliverOnce(store.db, config, log, nodeTransports())).toMatchObject({ sent: 1, failed: 0 });
      expect(smtp.mails).toHaveLength(1);
      expect(smtp.mails[0]).toMatchObject({ from: "pglens@example.com", to: ["dba@example.com", "oncall@example.com"] });
      expect(smtp.mails[0].raw).toMatch(/^Subject: \[pglens\] CRITICAL Fired: disk_usage_critical on monitored$/m);
      expect(smtp.mails[0].raw).toMatch(/Content-Type: text\/plain/);
      expect(smtp.mails[0].raw).toMatch(/Content-Type: text\/html/);
      expect(smtp.mails[0].raw).toContain("A file system is almost full");
    } finally {
      await smtp.close();
    }
  });

  it("refuses a destination that does not resolve", async () => {
    const res = await api("POST", "/api/v1/notification-channels", {
      token: root,
      body: { channel_type: "webhook", name: "nowhere", endpoint_url: "https://no-such-host.invalid/x" },
    });
    expect(res).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^endpoint_url: cannot resolve no-such-host.invalid/) } });
  });
});
