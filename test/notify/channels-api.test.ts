/**
 * Notification channels through the API with real receivers: an HTTP server for Slack/Mattermost/webhook
 * channels and an SMTP server for email. Secrets never come back, in any response or log line; bad input is a
 * 400 that writes nothing; test sends report the receiver's answer (502) without secrets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setAdminGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { startHttpReceiver, startSmtpReceiver } from "../support/receivers.ts";

let store: TestDatastore;
let api: ReturnType<typeof client>;
let app: ReturnType<typeof testApp>["app"];
let logs: Array<Record<string, unknown>>;
let admin: string;
let hooks: Awaited<ReturnType<typeof startHttpReceiver>>;
let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
const SECRETS = ["T000/B000/hook-secret-xyz", "bearer-secret-abc", "header-secret-def", "smtp-pass-ghi", "smtp-user-jkl"];

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  const built = testApp(store.db);
  api = client(built.app);
  app = built.app;
  logs = built.logs;
  const u = await userWithToken(store.db, "notifier");
  const g = await createGroup(store.db, "notifiers", "");
  await setAdminGrants(store.db, g.id, ["manage_notification_channels"]);
  await addMember(store.db, g.id, { type: "user", id: u.id });
  admin = u.token;
  hooks = await startHttpReceiver((req, _n, res) => {
    if (req.path === "/fail") return res.writeHead(500).end(`upstream broke for ${req.headers.authorization}`);
    if (req.path === "/moved") return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
    res.end("ok");
  });
  smtp = await startSmtpReceiver({ user: "smtp-user-jkl", pass: "smtp-pass-ghi" });
});
afterAll(async () => {
  await hooks.close();
  await smtp.close();
  await store.close();
});

const create = (body: Record<string, unknown>) => api("POST", "/api/v1/notification-channels", { token: admin, body });
const count = async () => (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM notification_channels"))[0].n;

describe("notification channels", () => {
  it.each([
    [{ channel_type: "pager", name: "x" }, "body field `channel_type`"],
    [{ channel_type: "slack" }, "body field `name`"],
    [{ channel_type: "slack", name: "x" }, "webhook_url is required for slack channels"],
    [{ channel_type: "slack", name: "x", webhook_url: "ftp://hooks" }, "webhook_url: only http and https URLs are allowed"],
    [{ channel_type: "webhook", name: "x", endpoint_url: "http://169.254.169.254/latest" }, "endpoint_url: refused: 169.254.169.254 is a linkLocal address"],
    [{ channel_type: "webhook", name: "x", endpoint_url: "http://[fe80::1]/x" }, "linkLocal"],
    [{ channel_type: "webhook", name: "x", endpoint_url: "http://0.0.0.0:8080/x" }, "unspecified"],
    [{ channel_type: "webhook", name: "x", endpoint_url: "http://127.0.0.1/x", auth_type: "bearer" }, "auth_credentials is required with auth_type bearer"],
    [
      { channel_type: "webhook", name: "x", endpoint_url: "http://127.0.0.1/x", auth_type: "api_key", auth_credentials: "no-colon" },
      "api_key takes Header-Name:value",
    ],
    [
      { channel_type: "webhook", name: "x", endpoint_url: "http://127.0.0.1/x", template_alert_fire: "{{#x}}" },
      "template_alert_fire: the template does not parse",
    ],
    [{ channel_type: "email", name: "x", from_address: "a@b.io" }, "smtp_host is required for email channels"],
    [{ channel_type: "email", name: "x", smtp_host: "127.0.0.1" }, "from_address is required for email channels"],
    [{ channel_type: "email", name: "x", smtp_host: "127.0.0.1", from_address: "not-an-address" }, "must be a valid email address"],
  ])("refuses %j", async (body, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
    expect(await count()).toBe(0);
  });

  it("never returns or logs a secret, merges updates, and clears a secret given as empty", async () => {
    const slack = await create({ channel_type: "slack", name: "team slack", webhook_url: `${hooks.url}/services/${SECRETS[0]}` });
    const hook = await create({
      channel_type: "webhook",
      name: "ops hook",
      endpoint_url: `${hooks.url}/in`,
      auth_type: "bearer",
      auth_credentials: SECRETS[1],
      headers: { "X-Team-Key": SECRETS[2] },
      is_estate_default: true,
    });
    const mail = await create({
      channel_type: "email",
      name: "dba mail",
      smtp_host: "127.0.0.1",
      smtp_port: smtp.port,
      smtp_use_tls: false,
      smtp_username: SECRETS[4],
      smtp_password: SECRETS[3],
      from_address: "pglens@example.com",
    });
    expect([slack.status, hook.status, mail.status]).toEqual([201, 201, 201]);
    expect(hook.body).toMatchObject({
      webhook_url_set: false,
      auth_type: "bearer",
      auth_credentials_set: true,
      header_names: ["X-Team-Key"],
      is_estate_default: true,
    });
    expect(mail.body).toMatchObject({ smtp_username_set: true, smtp_password_set: true, recipients: [] });
    const updated = await api("PUT", `/api/v1/notification-channels/${hook.body.id}`, {
      token: admin,
      body: { description: "pager bridge", auth_credentials: "", auth_type: null },
    });
    expect(updated.body).toMatchObject({
      description: "pager bridge",
      auth_credentials_set: false,
      header_names: ["X-Team-Key"],
      endpoint_url: `${hooks.url}/in`,
    });
    const kept = await api("PUT", `/api/v1/notification-channels/${slack.body.id}`, { token: admin, body: { name: "renamed" } });
    expect(kept.body).toMatchObject({ name: "renamed", webhook_url_set: true });
    await api("POST", `/api/v1/notification-channels/${slack.body.id}/test`, { token: admin, body: {} });
    const everything = [
      slack.text,
      hook.text,
      mail.text,
      updated.text,
      kept.text,
      (await api("GET", "/api/v1/notification-channels", { token: admin })).text,
      JSON.stringify(logs),
    ];
    for (const text of everything) for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(
      (await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM notification_channels WHERE webhook_url_secret LIKE '%hook-secret%'"))[0].n,
    ).toBe(0);
  });

  it("sends test messages to the real receivers, with method, headers, auth and body", async () => {
    const hook = await create({
      channel_type: "webhook",
      name: "auth hook",
      endpoint_url: `${hooks.url}/auth`,
      http_method: "PUT",
      auth_type: "basic",
      auth_credentials: "svc:pw",
      headers: { "X-Env": "prod" },
    });
    expect((await api("POST", `/api/v1/notification-channels/${hook.body.id}/test`, { token: admin, body: {} })).body).toEqual({ status: "sent" });
    const got = hooks.requests.at(-1)!;
    expect(got).toMatchObject({
      method: "PUT",
      path: "/auth",
      headers: { authorization: `Basic ${btoa("svc:pw")}`, "x-env": "prod", "content-type": "application/json" },
    });
    // The test has a real alert's shape (a sample marked as a test) and the headers of a real delivery.
    expect(JSON.parse(got.body)).toMatchObject({ event: "alert_fire", test: true, title: "pglens test alert", server: { name: "example-server" } });
    expect(got.headers["user-agent"]).toMatch(/^pglens\/\d+\.\d+\.\d+/);
    expect(got.headers["x-pglens-delivery-id"]).toMatch(/^test-[0-9a-f-]{36}$/);
    const mm = await create({ channel_type: "mattermost", name: "mm", webhook_url: `${hooks.url}/mm` });
    await api("POST", `/api/v1/notification-channels/${mm.body.id}/test`, { token: admin, body: {} });
    expect(JSON.parse(hooks.requests.at(-1)!.body).text).toBe("[TEST] 🔵 Fired: pglens test alert on example-server");
  });

  it("emails a test message through SMTP with login, to a recipient given or the channel's own", async () => {
    const mail = (await api("GET", "/api/v1/notification-channels", { token: admin })).body.find((c: { name: string }) => c.name === "dba mail");
    expect((await api("POST", `/api/v1/notification-channels/${mail.id}/test`, { token: admin, body: {} })).body.error).toContain("no recipients");
    expect((await api("POST", `/api/v1/notification-channels/${mail.id}/recipients`, { token: admin, body: { email_address: "nope" } })).status).toBe(400);
    const added = await api("POST", `/api/v1/notification-channels/${mail.id}/recipients`, {
      token: admin,
      body: { email_address: "dba@example.com", display_name: "DBA" },
    });
    expect(added.status).toBe(201);
    expect((await api("POST", `/api/v1/notification-channels/${mail.id}/test`, { token: admin, body: {} })).body).toEqual({ status: "sent" });
    expect(
      (await api("POST", `/api/v1/notification-channels/${mail.id}/test`, { token: admin, body: { recipient_email: "oncall@example.com" } })).body,
    ).toEqual({ status: "sent" });
    expect((await api("POST", `/api/v1/notification-channels/${mail.id}/test`, { token: admin, body: { recipient_email: "not an address" } })).status).toBe(
      400,
    );
    const bare = await app.request(`/api/v1/notification-channels/${mail.id}/test`, { method: "POST", headers: { authorization: `Bearer ${admin}` } }); // no body at all
    expect(await bare.json()).toEqual({ status: "sent" });
    expect(smtp.mails.map((m) => m.to)).toEqual([["dba@example.com"], ["oncall@example.com"], ["dba@example.com"]]);
    expect(smtp.mails[0]).toMatchObject({ from: "pglens@example.com", user: "smtp-user-jkl" });
    expect(smtp.mails[0].raw).toMatch(/^Subject: \[pglens\] \[TEST\] INFO Fired: pglens test alert on example-server$/m);
    expect(smtp.mails[0].raw).toContain("text/plain");
    expect(smtp.mails[0].raw).toContain("text/html");
    const recipients = (await api("GET", `/api/v1/notification-channels/${mail.id}/recipients`, { token: admin })).body;
    expect(recipients).toMatchObject([{ email_address: "dba@example.com", display_name: "DBA", enabled: true }]);
  });

  it("answers 502 with the receiver's status (never its body, which may echo secrets); refuses redirects", async () => {
    const failing = await create({
      channel_type: "webhook",
      name: "failing",
      endpoint_url: `${hooks.url}/fail`,
      auth_type: "bearer",
      auth_credentials: "leaky-token-123",
    });
    const res = await api("POST", `/api/v1/notification-channels/${failing.body.id}/test`, { token: admin, body: {} });
    expect(res.status).toBe(502);
    expect(res.body.error).toBe("the test message was not delivered: it answered 500 Internal Server Error");
    const moved = await create({ channel_type: "webhook", name: "moved", endpoint_url: `${hooks.url}/moved` });
    const before = hooks.requests.length;
    const redirected = await api("POST", `/api/v1/notification-channels/${moved.body.id}/test`, { token: admin, body: {} });
    expect(redirected).toMatchObject({ status: 502, body: { error: expect.stringContaining("302 Found (a redirect), which pglens does not follow") } });
    expect(hooks.requests.length).toBe(before + 1);
  });

  it("gives up on a receiver that does not answer within 10 s", async () => {
    const hang = await startHttpReceiver(() => {}); // never answers
    try {
      const slow = await create({ channel_type: "webhook", name: "slow", endpoint_url: `${hang.url}/x` });
      const started = Date.now();
      const res = await api("POST", `/api/v1/notification-channels/${slow.body.id}/test`, { token: admin, body: {} });
      expect(res).toMatchObject({ status: 502, body: { error: "the test message was not delivered: no answer within 10 s" } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
    } finally {
      await hang.close();
    }
  }, 20_000);

  it("keeps channel overrides per scope", async () => {
    const conn = await addConnection(store.db, "prod");
    const root = (await userWithToken(store.db, "root", { superuser: true })).token;
    const hook = (await api("GET", "/api/v1/notification-channels", { token: admin })).body.find((c: { name: string }) => c.name === "ops hook");
    expect((await api("PUT", `/api/v1/channel-overrides/server/${conn}/${hook.id}`, { token: admin, body: { enabled: false } })).status).toBe(404); // the server is not visible to this admin
    expect((await api("PUT", `/api/v1/channel-overrides/server/${conn}/${hook.id}`, { token: root, body: { enabled: false } })).body).toEqual({ status: "ok" });
    const entries = (await api("GET", `/api/v1/channel-overrides/server/${conn}`, { token: root })).body;
    expect(entries.find((e: { channel_id: number }) => e.channel_id === hook.id)).toMatchObject({
      is_estate_default: true,
      has_override: true,
      override_enabled: false,
    });
    expect((await api("DELETE", `/api/v1/channel-overrides/server/${conn}/${hook.id}`, { token: root })).status).toBe(204);
  });
});
