/**
 * A notification channel's stored secrets must not follow it to a destination its creator did not choose
 * (#46 items 2, 3, 10): a second channel manager re-points a webhook or an email channel at their own receiver
 * and asks for a test send. The receivers are real: an HTTP server and an SMTP server on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, createGroup, setAdminGrants } from "../../src/datastore/groups.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { startHttpReceiver, startSmtpReceiver } from "../support/receivers.ts";

const BEARER = "creator-bearer-secret";
const HEADER = "creator-header-secret";
const URL_TOKEN = "creator-url-token";
const SMTP_LOGIN = { user: "creator-smtp-user", pass: "creator-smtp-pass" };

let store: TestDatastore;
let api: ReturnType<typeof client>;
let creator: string;
let attacker: string;
let root: string;
let legit: Awaited<ReturnType<typeof startHttpReceiver>>;
let evil: Awaited<ReturnType<typeof startHttpReceiver>>;
let legitSmtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
let evilSmtp: Awaited<ReturnType<typeof startSmtpReceiver>>;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  api = client(testApp(store.db).app);
  const group = await createGroup(store.db, "notifiers", "");
  await setAdminGrants(store.db, group.id, ["manage_notification_channels"]);
  for (const name of ["creator", "attacker"]) {
    const u = await userWithToken(store.db, name);
    await addMember(store.db, group.id, { type: "user", id: u.id });
    if (name === "creator") creator = u.token;
    else attacker = u.token;
  }
  root = (await userWithToken(store.db, "root", { superuser: true })).token;
  legit = await startHttpReceiver((req, _n, res) =>
    req.path.startsWith("/intranet") ? res.writeHead(500).end("intranet page: db password is hunter2") : res.end("ok"),
  );
  evil = await startHttpReceiver();
  legitSmtp = await startSmtpReceiver(SMTP_LOGIN);
  evilSmtp = await startSmtpReceiver(); // accepts any login and records it
});
afterAll(async () => {
  await Promise.all([legit.close(), evil.close(), legitSmtp.close(), evilSmtp.close()]);
  await store.close();
});

const webhook = (token = creator) =>
  api("POST", "/api/v1/notification-channels", {
    token,
    body: {
      channel_type: "webhook",
      name: `hook ${Math.random()}`,
      endpoint_url: `${legit.url}/in?token=${URL_TOKEN}`,
      auth_type: "bearer",
      auth_credentials: BEARER,
      headers: { "X-Key": HEADER },
    },
  });
const email = () =>
  api("POST", "/api/v1/notification-channels", {
    token: creator,
    body: {
      channel_type: "email",
      name: `mail ${Math.random()}`,
      smtp_host: "127.0.0.1",
      smtp_port: legitSmtp.port,
      smtp_use_tls: false,
      smtp_username: SMTP_LOGIN.user,
      smtp_password: SMTP_LOGIN.pass,
      from_address: "pglens@example.com",
    },
  });
const everything = () => JSON.stringify([evil.requests, evilSmtp.mails]);

describe("re-pointing a channel", () => {
  it("a webhook: endpoint_url or http_method changed by another manager needs every stored secret again", async () => {
    const { body: channel } = await webhook();
    const evilUrl = `${evil.url}/harvest`;
    for (const change of [{ endpoint_url: evilUrl }, { endpoint_url: evilUrl, auth_credentials: "mine" }, { http_method: "PUT" }]) {
      const res = await api("PUT", `/api/v1/notification-channels/${channel.id}`, { token: attacker, body: change });
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.body.error).toMatch(/^changing (endpoint_url|http_method) sends the channel's stored secrets somewhere new: give .*`headers`/);
    }
    expect((await api("POST", `/api/v1/notification-channels/${channel.id}/test`, { token: attacker, body: {} })).status).toBe(200);
    expect(evil.requests).toHaveLength(0);
    // With their own secrets in the same request, the attacker sends only what they gave.
    const own = await api("PUT", `/api/v1/notification-channels/${channel.id}`, {
      token: attacker,
      body: { endpoint_url: evilUrl, auth_credentials: "attacker's own", headers: {} },
    });
    expect(own.status).toBe(200);
    expect((await api("POST", `/api/v1/notification-channels/${channel.id}/test`, { token: attacker, body: {} })).status).toBe(200);
    expect(evil.requests).toHaveLength(1);
    expect(everything()).not.toMatch(new RegExp(`${BEARER}|${HEADER}|${URL_TOKEN}`));
    expect(evil.requests[0].headers.authorization).toBe("Bearer attacker's own");
  });

  it("an email channel: smtp_host, smtp_port or smtp_use_tls changed by another manager needs the SMTP login again", async () => {
    const { body: channel } = await email();
    await api("POST", `/api/v1/notification-channels/${channel.id}/recipients`, { token: creator, body: { email_address: "dba@example.com" } });
    for (const change of [
      { smtp_port: evilSmtp.port },
      { smtp_host: "localhost", smtp_port: evilSmtp.port },
      { smtp_use_tls: true },
      { smtp_port: evilSmtp.port, smtp_username: "x" },
    ]) {
      const res = await api("PUT", `/api/v1/notification-channels/${channel.id}`, { token: attacker, body: change });
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.body.error).toContain("`smtp_password`");
    }
    expect((await api("POST", `/api/v1/notification-channels/${channel.id}/test`, { token: attacker, body: {} })).status).toBe(200);
    expect(legitSmtp.mails).toHaveLength(1);
    expect(evilSmtp.mails).toHaveLength(0);
    expect(everything()).not.toContain(SMTP_LOGIN.pass);
  });

  it("the creator and a superuser may re-point without giving the secrets again; harmless changes need nothing", async () => {
    const { body: channel } = await webhook();
    expect((await api("PUT", `/api/v1/notification-channels/${channel.id}`, { token: attacker, body: { description: "checked", enabled: true } })).status).toBe(
      200,
    );
    expect(
      (await api("PUT", `/api/v1/notification-channels/${channel.id}`, { token: creator, body: { endpoint_url: `${legit.url}/moved`, http_method: "PUT" } }))
        .status,
    ).toBe(200);
    expect((await api("PUT", `/api/v1/notification-channels/${channel.id}`, { token: root, body: { endpoint_url: `${legit.url}/again` } })).status).toBe(200);
    const before = legit.requests.length;
    expect((await api("POST", `/api/v1/notification-channels/${channel.id}/test`, { token: creator, body: {} })).status).toBe(200);
    expect(legit.requests.slice(before)).toMatchObject([{ method: "PUT", path: "/again", headers: { authorization: `Bearer ${BEARER}`, "x-key": HEADER } }]);
  });
});

describe("the channel test is no read oracle", () => {
  it("a failed test reports the status and reason only, never the receiver's body", async () => {
    const res = await api("POST", "/api/v1/notification-channels", {
      token: attacker,
      body: { channel_type: "webhook", name: "peek", endpoint_url: `${legit.url}/intranet/admin` },
    });
    const tried = await api("POST", `/api/v1/notification-channels/${res.body.id}/test`, { token: attacker, body: {} });
    expect(tried).toMatchObject({ status: 502, body: { error: "the test message was not delivered: it answered 500 Internal Server Error" } });
    expect(tried.text).not.toContain("hunter2");
    const history = await store.db.query<{ last_error: string | null }>("SELECT last_error FROM notifications");
    expect(JSON.stringify(history)).not.toContain("hunter2");
  });

  it("webhooks send with POST, PUT or PATCH only", async () => {
    const get = await api("POST", "/api/v1/notification-channels", {
      token: attacker,
      body: { channel_type: "webhook", name: "get", endpoint_url: `${legit.url}/intranet`, http_method: "GET" },
    });
    expect(get.status).toBe(400);
    expect(get.body.error).toContain("http_method");
  });
});

describe("a webhook's endpoint_url", () => {
  it("is stored sealed and returned with its user info and query values masked, and still sent in full", async () => {
    const url = `${legit.url.replace("http://", "http://hookuser:hookpass@")}/in?token=${URL_TOKEN}&team=ops`;
    const created = await api("POST", "/api/v1/notification-channels", {
      token: creator,
      body: { channel_type: "webhook", name: "tokened", endpoint_url: url },
    });
    expect(created.status).toBe(201);
    expect(created.body.endpoint_url).toBe(`${legit.url.replace("http://", "http://***:***@")}/in?token=***&team=***`);
    for (const res of [
      await api("GET", `/api/v1/notification-channels/${created.body.id}`, { token: creator }),
      await api("GET", "/api/v1/notification-channels", { token: attacker }),
    ]) {
      expect(res.text).not.toMatch(/hookpass|creator-url-token/);
    }
    const [row] = await store.db.query<Record<string, unknown>>("SELECT * FROM notification_channels WHERE id = $1", [created.body.id]);
    expect(JSON.stringify(row)).not.toMatch(/hookpass|creator-url-token/);
    const before = legit.requests.length;
    expect((await api("POST", `/api/v1/notification-channels/${created.body.id}/test`, { token: creator, body: {} })).status).toBe(200);
    expect(legit.requests.slice(before)).toMatchObject([
      { path: `/in?token=${URL_TOKEN}&team=ops`, headers: { authorization: `Basic ${btoa("hookuser:hookpass")}` } },
    ]);
  });
});
