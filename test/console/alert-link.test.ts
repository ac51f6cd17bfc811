/**
 * An alert notice links to the alert's page in pglens when public_url is set (#47 item 8), and the page is the
 * first of the console: a real Chromium follows the link from a real webhook delivery, is sent to sign in, signs
 * in, and reads the alert; data is rendered as text under a strict CSP; a cross-site form post is refused.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setConnectionGrants } from "../../src/datastore/groups.ts";
import { deliverOnce } from "../../src/notify/deliver.ts";
import { queueNotifications } from "../../src/notify/queue.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { launchBrowser } from "../support/browser.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { monitoringConfig, quietLog } from "../support/monitored.ts";
import { serveOnFreePort } from "../support/node-server.ts";
import { startHttpReceiver } from "../support/receivers.ts";

const PASSWORD = "a long enough passphrase 9";
const TITLE = `<img src=x onerror="document.title='pwned'"> bloat on orders`;
let store: TestDatastore;
let server: Awaited<ReturnType<typeof serveOnFreePort>>;
let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
let browser: Browser;
let alertId: number;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  const conn = await addConnection(store.db, "prod-db-1");
  await store.db.query("UPDATE connections SET is_shared = true");
  await userWithToken(store.db, "dba", { password: PASSWORD });
  await userWithToken(store.db, "outsider", { password: PASSWORD });
  const viewer = await userWithToken(store.db, "viewer", { password: PASSWORD });
  const readers = await createGroup(store.db, "readers", "");
  await setConnectionGrants(store.db, readers.id, [{ connection_id: conn, access_level: "read" }]);
  await addMember(store.db, readers.id, { type: "user", id: viewer.id });
  await store.db.query("UPDATE connections SET is_shared = false, owner_user_id = (SELECT id FROM users WHERE username = 'dba')");
  [{ id: alertId }] = await store.db.query<{ id: number }>(
    "INSERT INTO alerts (alert_type, connection_id, severity, title, description, status, metric_name, metric_value, threshold_value, operator) VALUES ('threshold', $1, 'critical', $2, 'Dead tuples pile up', 'active', 'm', 42.5, 20, '>') RETURNING id::int AS id",
    [conn, TITLE],
  );
  server = await serveOnFreePort(testApp(store.db).app.fetch);
  receiver = await startHttpReceiver();
  await store.db.query(
    "INSERT INTO notification_channels (name, channel_type, endpoint_url, is_estate_default, created_by) VALUES ('hook', 'webhook', $1, true, 'dba')",
    [`${receiver.url}/hook`],
  );
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.close();
  await store?.close();
});

async function signedIn(user: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${server.url}/alerts/${alertId}`);
  await page.fill("input[name=username]", user);
  await page.fill("input[name=password]", PASSWORD);
  await Promise.all([page.waitForURL(`${server.url}/alerts/${alertId}`), page.click("button[type=submit]")]);
  return page;
}

const statusInDatastore = async () => (await store.db.query<{ status: string }>("SELECT status FROM alerts WHERE id = $1", [alertId]))[0].status;

describe("acknowledging in the console", () => {
  it("a user with read_write acknowledges with a note, and takes it back", async () => {
    const page = await signedIn("dba");
    await page.fill("input[name=message]", "looking into it");
    await Promise.all([page.waitForURL(`${server.url}/alerts/${alertId}`), page.click("text=Acknowledge")]);
    expect(await page.textContent("dl")).toContain("dba: looking into it");
    expect(await statusInDatastore()).toBe("acknowledged");
    // The API (with the same session) reports it as any client would see it.
    const listed = (await (await page.request.get(`${server.url}/api/v1/alerts`)).json()) as { alerts: Array<{ id: number; status: string }> };
    expect(listed.alerts.find((a) => a.id === alertId)?.status).toBe("acknowledged");
    await Promise.all([page.waitForURL(`${server.url}/alerts/${alertId}`), page.click("text=Remove the acknowledgment")]);
    expect(await statusInDatastore()).toBe("active");
    await page.close();
  });

  it("a read-only user sees no controls, and a forged post from the page is refused", async () => {
    const page = await signedIn("viewer");
    expect(await page.textContent("h1")).toContain("bloat on orders");
    expect(await page.locator("form.actions").count()).toBe(0);
    // With the viewer's session and a same-site header a browser would send: the rights still refuse.
    const forged = await page.request.post(`${server.url}/alerts/${alertId}/acknowledge`, {
      form: { message: "forged" },
      headers: { "sec-fetch-site": "same-origin" },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain("needs read_write on its server");
    expect(await statusInDatastore()).toBe("active");
    await page.close();
  });
});

describe("an alert's link", () => {
  it("is in the notice when public_url is set, and leads a browser through sign-in to the alert, rendered as text", async () => {
    await queueNotifications(store.db, [{ alert_id: alertId, kind: "alert_fire", sequence: 1 }]);
    const config = { ...monitoringConfig, public_url: `${server.url}/` };
    expect(await deliverOnce(store.db, config, quietLog, {})).toMatchObject({ sent: 1 });
    const notice = JSON.parse(receiver.requests[0].body) as { url: string };
    expect(notice.url).toBe(`${server.url}/alerts/${alertId}`);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    page.on("pageerror", (e) => errors.push(e.message));
    const first = await page.goto(notice.url);
    expect(page.url()).toBe(`${server.url}/sign-in?next=${encodeURIComponent(`/alerts/${alertId}`)}`);
    expect(first?.headers()["content-security-policy"]).toContain("default-src 'none'");
    await page.fill("input[name=username]", "dba");
    await page.fill("input[name=password]", PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForURL(notice.url);
    expect(await page.textContent("h1")).toContain(TITLE); // the markup is text, not an element
    expect(await page.locator("h1 img").count()).toBe(0);
    expect(await page.title()).not.toBe("pwned");
    expect(await page.textContent("dl")).toContain("m = 42.5 (> 20)");
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === "pglens_session")).toMatchObject({ httpOnly: true, sameSite: "Lax" });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows the alert only to users who may read its server", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/alerts/${alertId}`);
    await page.fill("input[name=username]", "outsider");
    await page.fill("input[name=password]", PASSWORD);
    const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith(`/alerts/${alertId}`)), page.click("button[type=submit]")]);
    expect(answer.status()).toBe(404);
    expect(await page.textContent("main")).toContain(`Alert ${alertId} was not found on the servers you can see.`);
    expect(await page.textContent("main")).not.toContain("bloat");
    await page.close();
  });

  it("refuses a cross-site form post (CSRF): a page elsewhere cannot sign a user out or in", async () => {
    const evil = createServer((_req, res) =>
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<form method="post" action="${server.url}/sign-in"><input name="username" value="dba"><input name="password" value="${PASSWORD}"><button>go</button></form>`,
        ),
    );
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
    try {
      const page = await browser.newPage();
      await page.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/sign-in")), page.click("button")]);
      expect(answer.status()).toBe(403);
      expect(await page.textContent("body")).toContain("not sent from a pglens page");
      expect((await page.context().cookies()).find((c) => c.name === "pglens_session")).toBeUndefined();
      await page.close();
    } finally {
      await new Promise<void>((r) => evil.close(() => r()));
    }
  });
});
