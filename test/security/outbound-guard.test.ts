/**
 * The outbound guard against the forms that slipped past it (#46 item 11): IPv6 addresses that carry a private
 * IPv4 address, and a name checked in one lookup but connected to after another (DNS rebinding). Real HTTP and
 * SMTP receivers on loopback; the resolver is the test's, so a name can answer differently each time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { client } from "../support/http.ts";
import { startHttpReceiver, startSmtpReceiver } from "../support/receivers.ts";
import { nodeTransports } from "../../src/notify/node-transports.ts";
import type { OpenChannel } from "../../src/notify/payloads.ts";
import { testMessage } from "../../src/notify/payloads.ts";
import { send } from "../../src/notify/transports.ts";

let store: TestDatastore;
let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
let port: number;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  receiver = await startHttpReceiver();
  smtp = await startSmtpReceiver();
  port = Number(new URL(receiver.url).port);
});
afterAll(async () => {
  await receiver.close();
  await smtp.close();
  await store.close();
});

const webhook = (url: string): OpenChannel => ({
  channel_type: "webhook",
  name: "hook",
  webhook_url: null,
  endpoint_url: url,
  http_method: "POST",
  headers: {},
  auth_type: null,
  auth_credentials: null,
  smtp: null,
  from_address: null,
  from_name: null,
  templates: {},
});

describe("with notifications.deny_private_networks", () => {
  it.each([`[::127.0.0.1]`, `[64:ff9b::7f00:1]`, `[2002:7f00:1::]`, `[2001:0:4136:e378:8000:63bf:80ff:fffe]`])(
    "a webhook at http://%s is refused: it reaches 127.0.0.1",
    async (host) => {
      const { app } = testApp(store.db, { config: { notifications: { ...testApp(store.db).config.notifications, deny_private_networks: true } } });
      const api = client(app);
      const { token } = await userWithToken(store.db, `u${Math.random()}`, { superuser: true });
      const res = await api("POST", "/api/v1/notification-channels", {
        token,
        body: { channel_type: "webhook", name: "sneaky", endpoint_url: `http://${host}:${port}/hook` },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^endpoint_url: refused: .* embeds 127\.0\.0\.1, a loopback address and notifications\.deny_private_networks is set$/);
    },
  );

  it("a name that answers a public address first and a loopback one next (DNS rebinding) is never connected to", async () => {
    const answers = ["93.184.215.14", "127.0.0.1", "127.0.0.1"];
    const lookups: string[] = [];
    const rebinding = async (host: string) => (lookups.push(host), [answers[Math.min(lookups.length - 1, answers.length - 1)]]);
    const before = receiver.requests.length;
    const channel = webhook(`http://rebind.pglens.invalid:${port}/hook`);
    await expect(send(channel, testMessage(channel, []), nodeTransports(rebinding), true)).rejects.toThrow(
      /refused: rebind\.pglens\.invalid resolves to 127\.0\.0\.1 is a loopback address/,
    );
    expect(lookups.length).toBeGreaterThanOrEqual(2); // the check, and the connection's own lookup, checked again
    expect(receiver.requests.length).toBe(before);
  });
});

describe("the address checked is the address connected to", () => {
  it("HTTP: a name only the checking resolver knows is reached through that resolver's answer", async () => {
    const before = receiver.requests.length;
    const channel = webhook(`http://only-pglens-knows.invalid:${port}/hook`);
    await send(
      channel,
      testMessage(channel, []),
      nodeTransports(async () => ["127.0.0.1"]),
      false,
    );
    expect(receiver.requests.length).toBe(before + 1);
    expect(receiver.requests.at(-1)!.headers.host).toBe(`only-pglens-knows.invalid:${port}`);
  });

  it("SMTP: the mail goes to the address the guard checked, not to a second lookup of the name", async () => {
    const channel: OpenChannel = {
      ...webhook(""),
      channel_type: "email",
      endpoint_url: null,
      smtp: { host: "mail.pglens.invalid", port: smtp.port, username: null, password: null, use_tls: false },
      from_address: "pglens@example.com",
    };
    await send(
      channel,
      testMessage(channel, ["dba@example.com"]),
      nodeTransports(async () => ["127.0.0.1"]),
      false,
    );
    expect(smtp.mails.at(-1)!.to).toEqual(["dba@example.com"]);
  });
});
