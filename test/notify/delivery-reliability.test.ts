/**
 * Delivery the way it fails (#47 items 2-4, 8): two pglens instances on one real PostgreSQL datastore, real HTTP
 * receivers that answer slowly, hang, or fail and come back, and a real SMTP server. Counted per (channel, notice): each is delivered
 * once, in the order it was queued, and nothing is lost while its channel's receiver is away for less than
 * notifications.max_age_hours; past that it ends `expired` and a person can send it again.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import type { Driver } from "../../drivers/types.ts";
import { type Config, resolveConfig } from "../../src/config.ts";
import { deliverOnce } from "../../src/notify/deliver.ts";
import { nodeTransports } from "../../src/notify/node-transports.ts";
import { queueNotifications } from "../../src/notify/queue.ts";
import { createSelfMetrics } from "../../src/self-metrics.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { TEST_SECRET, pause, quietLog as log } from "../support/monitored.ts";
import { startHttpReceiver, startSmtpReceiver } from "../support/receivers.ts";

const base = resolveConfig({}, { PGLENS_SECRET: TEST_SECRET });
const config: Config = { ...base, notifications: { ...base.notifications, retry_minutes: [0] } };

let store: TestDatastore;
let instances: Driver[];
let conn: number;
let api: ReturnType<typeof client>;
let root: string;

beforeAll(async () => {
  store = await migratedDatastore("pg");
  instances = [openPg(store.url!), openPg(store.url!)];
  conn = await addConnection(store.db, "monitored");
  api = client(testApp(store.db).app);
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
});
afterAll(async () => {
  await Promise.all(instances.map((d) => d.close()));
  await store.close();
});
beforeEach(async () => {
  await store.db.query("DELETE FROM notifications");
  await store.db.query("DELETE FROM notification_channels");
});

const channel = async (name: string, url: string) =>
  (
    await store.db.query<{ id: number }>(
      "INSERT INTO notification_channels (name, channel_type, endpoint_url, is_estate_default, created_by) VALUES ($1, 'webhook', $2, true, 'root') RETURNING id",
      [name, url],
    )
  )[0].id;

/** `count` alerts, each queued as a fire for every channel. */
async function queueFires(count: number) {
  for (let i = 0; i < count; i++) {
    const [a] = await store.db.query<{ id: number }>(
      "INSERT INTO alerts (alert_type, connection_id, severity, title, status, metric_name, object_name) VALUES ('threshold', $1, 'warning', $2, 'active', 'm', $3) RETURNING id::int AS id",
      [conn, `alert ${i}`, `${Date.now()}-${i}-${Math.random()}`],
    );
    await queueNotifications(store.db, [{ alert_id: a.id, kind: "alert_fire", sequence: 1 }]);
  }
}

const statuses = async () =>
  (await store.db.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM notifications GROUP BY status ORDER BY status")).map(
    (r) => `${r.status}:${r.n}`,
  );
const open = async () =>
  (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM notifications WHERE status IN ('pending', 'retrying', 'sending')"))[0].n;
const deliveryIds = (requests: Array<{ headers: Record<string, string | string[] | undefined> }>) =>
  requests.map((r) => Number(r.headers["x-pglens-delivery-id"]));

describe("two instances and a slow receiver", () => {
  it("send each notice once, in order, although a pass outlives its claims' lease", { timeout: 90_000 }, async () => {
    const slow = await startHttpReceiver((_req, _n, res) => void setTimeout(() => res.end("ok"), 700));
    try {
      await channel("slow", `${slow.url}/hook`);
      await queueFires(10);
      // A 2 s lease and 0.7 s per send: a pass over 10 notices outlives the lease of those it claimed last.
      const loop = async (db: Driver) => {
        const end = Date.now() + 60_000;
        while ((await open()) > 0 && Date.now() < end) {
          await deliverOnce(db, config, log, {}, new Date(), { leaseSeconds: 2 });
          await pause(50);
        }
      };
      await Promise.all(instances.map(loop));
      const ids = deliveryIds(slow.requests);
      expect(ids).toHaveLength(10);
      expect(new Set(ids).size).toBe(10);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(await statuses()).toEqual(["sent:10"]);
      expect(slow.requests.every((r) => r.headers["user-agent"]?.toString().startsWith("pglens/"))).toBe(true);
    } finally {
      await slow.close();
    }
  });
});

describe("a receiver that never answers", () => {
  it("delays only its own channel: the healthy webhook and the SMTP channel hear at once", { timeout: 60_000 }, async () => {
    const hanging = await startHttpReceiver(() => {});
    const healthy = await startHttpReceiver();
    const smtp = await startSmtpReceiver();
    try {
      await channel("hanging", `${hanging.url}/hook`);
      await channel("healthy", `${healthy.url}/hook`);
      const [mail] = await store.db.query<{ id: number }>(
        "INSERT INTO notification_channels (name, channel_type, smtp_host, smtp_port, smtp_use_tls, from_address, is_estate_default, created_by) VALUES ('mail', 'email', '127.0.0.1', $1, false, 'pglens@example.com', true, 'root') RETURNING id",
        [smtp.port],
      );
      await store.db.query("INSERT INTO email_recipients (channel_id, email_address) VALUES ($1, 'oncall@example.com')", [mail.id]);
      await queueFires(3);
      const started = Date.now();
      const arrivals: number[] = [];
      const watch = setInterval(() => {
        while (arrivals.length < healthy.requests.length + smtp.mails.length) arrivals.push(Date.now() - started);
      }, 10);
      const result = await deliverOnce(instances[0], config, log, nodeTransports());
      clearInterval(watch);
      expect(healthy.requests).toHaveLength(3);
      expect(smtp.mails).toHaveLength(3);
      expect(Math.max(...arrivals)).toBeLessThan(3_000); // the hanging one costs 10 s
      expect(result).toMatchObject({ sent: 6, failed: 1 }); // the hanging channel's first, then its others wait behind it
      expect(await statuses()).toEqual(["pending:2", "retrying:1", "sent:6"]);
    } finally {
      await hanging.close();
      await healthy.close();
      await smtp.close();
    }
  });
});

describe("a receiver away for a while", () => {
  it("gets everything it missed once it is back, in order, each once (same delivery id on every attempt)", { timeout: 60_000 }, async () => {
    let down = true;
    const flaky = await startHttpReceiver((_req, _n, res) => (down ? res.writeHead(503).end("down") : res.end("ok")));
    try {
      await channel("flaky", `${flaky.url}/hook`);
      await queueFires(5);
      for (let i = 0; i < 6; i++) await deliverOnce(instances[i % 2], config, log, {});
      expect(await statuses()).toEqual(["pending:4", "retrying:1"]); // only the oldest is tried; the rest wait behind it
      down = false;
      for (let i = 0; i < 3; i++) await deliverOnce(instances[i % 2], config, log, {});
      const delivered = flaky.requests.filter((r) => r.method === "POST").slice(6);
      expect(deliveryIds(delivered)).toEqual([...deliveryIds(delivered)].sort((a, b) => a - b));
      expect(new Set(deliveryIds(delivered)).size).toBe(5);
      expect(new Set(deliveryIds(flaky.requests.slice(0, 6))).size).toBe(1); // the retried notice kept its id
      expect(await statuses()).toEqual(["sent:5"]);
    } finally {
      await flaky.close();
    }
  });

  it("past notifications.max_age_hours a notice ends expired, is counted, and a person can send it again", { timeout: 60_000 }, async () => {
    let down = true;
    const away = await startHttpReceiver((_req, _n, res) => (down ? res.writeHead(503).end("down") : res.end("ok")));
    try {
      const id = await channel("away", `${away.url}/hook`);
      await queueFires(2);
      const shortLived: Config = { ...config, notifications: { ...config.notifications, max_age_hours: 1 / 3600 } }; // one second
      await deliverOnce(instances[0], shortLived, log, {});
      await pause(1_100);
      expect((await deliverOnce(instances[1], shortLived, log, {})).expired).toBe(2);
      expect(await statuses()).toEqual(["expired:2"]);
      expect(await createSelfMetrics(store.db).text(false)).toMatch(/^pglens_notifications\{status="expired"\} 2$/m);
      const history = (await api("GET", `/api/v1/notification-channels/${id}/history`, { token: root })).body;
      expect(history.map((h: { status: string }) => h.status)).toEqual(["expired", "expired"]);
      down = false;
      const again = await api("POST", `/api/v1/notification-channels/${id}/redeliver`, { token: root });
      expect(again).toMatchObject({ status: 200, body: { requeued: 2 } });
      await deliverOnce(instances[0], config, log, {});
      expect(await statuses()).toEqual(["sent:2"]);
      expect((await api("POST", `/api/v1/notification-channels/${id}/redeliver`, { token: root })).body).toEqual({ requeued: 0 });
    } finally {
      await away.close();
    }
  });
});
