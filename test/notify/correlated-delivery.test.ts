/**
 * Alert storms on real PostgreSQL: the alerter gives alerts raised on one server or cluster within the
 * correlation window one correlation id, GET /api/v1/alerts filters by it, and delivery sends a group's fires
 * as one message per channel (a real webhook receiver, a Slack-format receiver, a real SMTP server) instead
 * of one each; an alert elsewhere, or after the window, is a message of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateAndApply } from "../../src/alerts/alerter.ts";
import { type Config, resolveConfig } from "../../src/config.ts";
import { raiseAlerts } from "../../src/datastore/alerts.ts";
import { deliverOnce } from "../../src/notify/deliver.ts";
import { nodeTransports } from "../../src/notify/node-transports.ts";
import { queueNotifications } from "../../src/notify/queue.ts";
import type { NewAlert } from "../../src/vocabulary/alert-records.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { TEST_SECRET, quietLog as log } from "../support/monitored.ts";
import { startHttpReceiver, startSmtpReceiver } from "../support/receivers.ts";

const config: Config = resolveConfig({}, { PGLENS_SECRET: TEST_SECRET });
let store: TestDatastore;
let api: ReturnType<typeof client>;
let root: string;
let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
const fleet: number[] = [];
let loner: number;
let stormGroup: number;

const bodies = (path: string) => receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body));

beforeAll(async () => {
  store = await migratedDatastore("pg");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  receiver = await startHttpReceiver();
  smtp = await startSmtpReceiver();
  const [cluster] = await store.db.query<{ id: number }>("INSERT INTO clusters (name) VALUES ('payments') RETURNING id");
  for (let i = 1; i <= 10; i++) fleet.push(await addConnection(store.db, `pay-${i}`));
  loner = await addConnection(store.db, "elsewhere");
  await store.db.query("UPDATE connections SET cluster_id = $1 WHERE id = ANY($2::int[])", [cluster.id, fleet]);
  await store.db.query("UPDATE connections SET is_monitored = false");
  for (const body of [
    { channel_type: "webhook", name: "hook", endpoint_url: `${receiver.url}/hook` },
    { channel_type: "slack", name: "chat", webhook_url: `${receiver.url}/slack` },
    { channel_type: "email", name: "mail", smtp_host: "127.0.0.1", smtp_port: smtp.port, smtp_use_tls: false, from_address: "pglens@example.com" },
  ]) {
    const res = await api("POST", "/api/v1/notification-channels", { token: root, body: { ...body, is_estate_default: true } });
    expect(res.status, res.text).toBe(201);
    if (body.channel_type === "email")
      await api("POST", `/api/v1/notification-channels/${res.body.id}/recipients`, { token: root, body: { email_address: "dba@example.com" } });
  }
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await smtp?.close();
  await store?.close();
});

describe("correlated alerts", () => {
  it("a storm of 10 connection alerts on one cluster is one correlation group and one message per channel", async () => {
    await store.db.query("UPDATE connections SET is_monitored = true, connection_error = 'connection refused' WHERE id = ANY($1::int[])", [fleet]);
    const round = await evaluateAndApply(store.db);
    expect(round.raised).toHaveLength(10);
    const rows = await store.db.query<{ id: number; correlation_id: number; probe_name: string | null }>(
      "SELECT id::int AS id, correlation_id::int AS correlation_id, probe_name FROM alerts WHERE connection_id = ANY($1::int[]) ORDER BY id",
      [fleet],
    );
    const group = rows[0].id;
    stormGroup = group;
    expect(rows.map((r) => r.correlation_id)).toEqual(rows.map(() => group));
    expect(rows.every((r) => r.probe_name === null)).toBe(true); // connection alerts come from no probe

    const listed = await api("GET", `/api/v1/alerts?correlation_id=${group}`, { token: root });
    expect(listed.body.total).toBe(10);
    expect(listed.body.alerts.every((a: { correlation_id: number }) => a.correlation_id === group)).toBe(true);

    expect(await deliverOnce(store.db, config, log, nodeTransports())).toMatchObject({ sent: 30, failed: 0 });
    const [hook] = bodies("/hook");
    expect(bodies("/hook")).toHaveLength(1);
    expect(hook).toMatchObject({ event: "alert_group", correlation_id: group, count: 10, severity: "critical" });
    expect(hook.alerts.map((a: { alert_id: number }) => a.alert_id).sort((x: number, y: number) => x - y)).toEqual(rows.map((r) => r.id));
    expect(hook.alerts[0]).toMatchObject({ event: "alert_fire", server: { name: expect.stringMatching(/^pay-\d+$/) } });
    const slack = bodies("/slack");
    expect(slack).toHaveLength(1);
    expect(slack[0].text).toBe("🔴 Fired: 10 alerts on pay-1, pay-2, pay-3 and 7 more");
    expect(slack[0].attachments).toHaveLength(10);
    expect(slack[0].attachments[0].title).toMatch(/^🔴 Fired: Connection error: pay-\d+ on pay-\d+$/);
    expect(smtp.mails).toHaveLength(1);
    // Headers unfolded, quoted-printable soft line breaks joined: the mail as a reader sees it.
    const mail = smtp.mails[0].raw.replace(/\r\n[ \t]+/g, " ").replace(/=\r?\n/g, "");
    expect(mail).toMatch(/^Subject: \[pglens\] CRITICAL Fired: 10 alerts on pay-1, pay-2, pay-3 and 7 more\r?$/m);
    const plain = mail.slice(mail.indexOf("text/plain"), mail.indexOf("text/html"));
    expect(plain.match(/Server: pay-\d+ \(/g)).toHaveLength(10);
  });

  it("an alert on another server is its own group and message; one on the cluster after the window starts a new group", async () => {
    const before = bodies("/hook").length;
    const alert = (connection_id: number, object_name: string): NewAlert => ({
      alert_type: "threshold",
      rule_id: null,
      metric_name: "pg_stat_database.deadlocks_delta",
      connection_id,
      database_name: "app",
      object_name,
      metric_value: 3,
      threshold_value: 0,
      operator: ">",
      severity: "warning",
      title: "Deadlocks",
      description: "Deadlocks were detected",
      status: "active",
    });
    const [apart] = await raiseAlerts(store.db, [alert(loner, "a")], 300, 120);
    const [same] = await raiseAlerts(store.db, [alert(fleet[3], "b")], 300, 120);
    // An hour on: the storm's alerts are outside the window.
    await store.db.query("UPDATE alerts SET triggered_at = triggered_at - interval '1 hour'");
    const [later] = await raiseAlerts(store.db, [alert(fleet[5], "c")], 300, 120);
    const [solo] = await raiseAlerts(store.db, [alert(fleet[6], "d")], 300, 0); // window 0: no grouping
    const groups = new Map(
      (
        await store.db.query<{ id: number; correlation_id: number; probe_name: string }>(
          "SELECT id::int AS id, correlation_id::int AS correlation_id, probe_name FROM alerts",
        )
      ).map((r) => [r.id, r]),
    );
    expect(groups.get(apart.id)!.correlation_id).toBe(apart.id);
    expect(groups.get(same.id)!.correlation_id).toBe(stormGroup); // joined the storm, still within its window then
    expect(groups.get(later.id)!.correlation_id).toBe(later.id);
    expect(groups.get(solo.id)!.correlation_id).toBe(solo.id);
    expect(groups.get(apart.id)!.probe_name).toBe("pg_stat_database");

    await queueNotifications(
      store.db,
      [apart, later].map((a) => ({ alert_id: a.id, kind: "alert_fire" as const, sequence: 1 })),
    );
    await deliverOnce(store.db, config, log, nodeTransports());
    const sent = bodies("/hook").slice(before);
    expect(sent.map((b) => [b.event, b.alert_id])).toEqual([
      ["alert_fire", apart.id],
      ["alert_fire", later.id],
    ]);
  });

  it("a channel with its own fire template gets one message per alert, as the template renders one", async () => {
    await store.db.query("UPDATE notification_channels SET is_estate_default = false");
    const templated = await api("POST", "/api/v1/notification-channels", {
      token: root,
      body: {
        channel_type: "webhook",
        name: "templated",
        endpoint_url: `${receiver.url}/templated`,
        template_alert_fire: '{"id": {{AlertID}}}',
        is_estate_default: true,
      },
    });
    expect(templated.status, templated.text).toBe(201);
    const ids = await store.db.query<{ id: number }>("SELECT id::int AS id FROM alerts WHERE connection_id = ANY($1::int[]) AND alert_type = 'connection'", [
      fleet.slice(0, 3),
    ]);
    await queueNotifications(
      store.db,
      ids.map((a) => ({ alert_id: a.id, kind: "alert_fire" as const, sequence: 9 })),
    );
    await deliverOnce(store.db, config, log, nodeTransports());
    expect(bodies("/templated").map((b) => b.id)).toEqual(ids.map((a) => a.id));
  });
});
