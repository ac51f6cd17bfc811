/** The notifier's pure parts: which channels fire, the outbound guard, payloads and templates. */
import { describe, expect, it } from "vitest";
import { channelsFor } from "../../src/notify/channel-selection.ts";
import { checkOutboundHost, refusedAddress } from "../../src/notify/outbound-guard.ts";
import { type AlertFacts, type OpenChannel, alertMessage, testMessage, withUnit } from "../../src/notify/payloads.ts";
import { checkTemplate } from "../../src/notify/templates.ts";

describe("channelsFor", () => {
  const place = { connectionId: 1, clusterId: 10, groupId: 20 };
  const channel = (id: number, is_estate_default: boolean, enabled = true) => ({ id, enabled, is_estate_default });
  const o = (channel_id: number, scope: "server" | "cluster" | "group", scope_id: number, enabled: boolean) => ({ channel_id, scope, scope_id, enabled });

  it("server override, else cluster, else group, else the estate default; disabled channels never", () => {
    const channels = [channel(1, true), channel(2, false), channel(3, true), channel(4, false), channel(5, true, false), channel(6, false)];
    const overrides = [
      o(1, "group", 20, false), // estate default switched off for the group...
      o(1, "server", 1, true), // ...and back on for this server
      o(2, "cluster", 10, true),
      o(2, "server", 2, false), // another server's override does not apply
      o(3, "cluster", 10, false),
      o(4, "group", 20, true),
      o(5, "server", 1, true), // disabled channel: no override turns it on
      o(6, "group", 21, true), // another group
    ];
    expect(channelsFor(channels, overrides, place)).toEqual([1, 2, 4]);
    expect(channelsFor(channels, overrides, { connectionId: 9, clusterId: null, groupId: null })).toEqual([1, 3]);
  });
});

describe("outbound guard", () => {
  it.each([
    ["169.254.169.254", false, /linkLocal/],
    ["fe80::1", false, /linkLocal/],
    ["0.0.0.0", false, /unspecified/],
    ["::ffff:169.254.169.254", false, /linkLocal/],
    ["10.0.0.5", true, /private address and notifications.deny_private_networks is set/],
    ["127.0.0.1", true, /loopback/],
    ["fd12::1", true, /uniqueLocal/],
    // IPv6 forms that carry an IPv4 address are judged by it too.
    ["::7f00:1", true, /::7f00:1 embeds 127\.0\.0\.1, a loopback address/],
    ["::a9fe:a9fe", false, /embeds 169\.254\.169\.254, a linkLocal address/],
    ["::ffff:0:10.0.0.5", true, /embeds 10\.0\.0\.5, a private address/],
    ["64:ff9b::7f00:1", true, /embeds 127\.0\.0\.1, a loopback address/],
    ["64:ff9b:1::a9fe:a9fe", false, /embeds 169\.254\.169\.254/],
    ["2002:7f00:1::", true, /embeds 127\.0\.0\.1, a loopback address/],
    ["2002:a9fe:a9fe::1", false, /embeds 169\.254\.169\.254/],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", true, /embeds 127\.0\.0\.1, a loopback address/], // Teredo client 127.0.0.1
  ])("refuses %s (deny private: %s)", (address, deny, why) => {
    expect(refusedAddress(address, deny)).toMatch(why);
  });

  it.each([["10.0.0.5"], ["127.0.0.1"], ["192.168.1.10"], ["8.8.8.8"], ["::1"], ["64:ff9b::808:808"], ["2002:808:808::1"], ["2606:4700::1111"]])(
    "allows %s by default",
    (address) => {
      expect(refusedAddress(address, false)).toBeNull();
    },
  );

  it("checks every address a name resolves to", async () => {
    const resolve = async () => ["93.184.215.14", "169.254.169.254"];
    await expect(checkOutboundHost("metadata.example", "endpoint_url", false, resolve)).rejects.toThrow(
      "endpoint_url: refused: metadata.example resolves to 169.254.169.254 is a linkLocal address",
    );
    await expect(checkOutboundHost("ok.example", "endpoint_url", false, async () => ["93.184.215.14"])).resolves.toEqual(["93.184.215.14"]);
  });
});

const alert: AlertFacts = {
  id: 7,
  title: "long_running_queries",
  description: "A statement runs long",
  severity: "critical",
  status: "active",
  triggered_at: new Date("2026-11-23T10:00:00Z"),
  cleared_at: null,
  metric_name: "pg_stat_activity.max_query_duration_seconds",
  metric_value: 900,
  threshold_value: 600,
  operator: ">",
  database_name: "",
  server: { name: "prod", host: "db.internal", port: 5432 },
  unit: "seconds",
};
/** The same alert, cleared half an hour after it fired by a value back under the threshold. */
const cleared: AlertFacts = {
  ...alert,
  status: "cleared",
  cleared_at: new Date("2026-11-23T10:30:00Z"),
  clear_reason: "back within the threshold",
  clear_value: 12,
};
const base: OpenChannel = {
  channel_type: "webhook",
  name: "hook",
  webhook_url: null,
  endpoint_url: "https://hooks.example/in",
  http_method: "POST",
  headers: { "x-team": "dba" },
  auth_type: "bearer",
  auth_credentials: "s3cret-token",
  smtp: null,
  from_address: null,
  from_name: null,
  templates: {},
};
const now = new Date("2026-11-23T10:30:00Z");

describe("payloads", () => {
  it("sends the default webhook JSON with auth and custom headers", () => {
    const m = alertMessage(base, alert, "alert_fire", 0, [], now);
    expect(m).toMatchObject({
      transport: "http",
      method: "POST",
      url: "https://hooks.example/in",
      headers: { authorization: "Bearer s3cret-token", "x-team": "dba", "content-type": "application/json" },
    });
    expect(JSON.parse((m as { body: string }).body)).toEqual({
      event: "alert_fire",
      alert_id: 7,
      title: "long_running_queries",
      description: "A statement runs long",
      severity: "critical",
      server: { name: "prod", host: "db.internal", port: 5432 },
      database: null,
      metric: { name: "pg_stat_activity.max_query_duration_seconds", value: 900, threshold: 600, operator: ">", unit: "seconds", text: "900 s (> 600 s)" },
      resolution: null,
      triggered_at: "2026-11-23T10:00:00.000Z",
      cleared_at: null,
      open_seconds: 1800,
      test: false,
      url: null,
    });
    expect(alertMessage({ ...base, auth_type: "api_key", auth_credentials: "X-Api-Key: k-123" }, alert, "alert_fire", 0, [], now)).toMatchObject({
      headers: { "X-Api-Key": "k-123" },
    });
    expect(alertMessage({ ...base, auth_type: "basic", auth_credentials: "u:p" }, alert, "alert_fire", 0, [], now)).toMatchObject({
      headers: { authorization: `Basic ${btoa("u:p")}` },
    });
  });

  it("fills a webhook template with JSON-escaped values", () => {
    const tricky = { ...alert, title: 'say "hi"\nnow' };
    const m = alertMessage(
      { ...base, templates: { alert_fire: '{"summary":"{{AlertTitle}} on {{ServerName}}","value":{{MetricValue}}}' } },
      tricky,
      "alert_fire",
      0,
      [],
      now,
    );
    expect(JSON.parse((m as { body: string }).body)).toEqual({ summary: 'say "hi"\nnow on prod', value: 900 });
  });

  it("gives Slack a coloured attachment and email a subject with text and HTML parts", () => {
    const email = alertMessage(
      { ...base, channel_type: "email", smtp: { host: "smtp", port: 25, username: null, password: null, use_tls: false }, from_address: "pglens@x.io" },
      { ...alert, title: "<b>x</b>" },
      "alert_fire",
      0,
      ["dba@x.io"],
      now,
    );
    expect(email).toMatchObject({ transport: "email", to: ["dba@x.io"], subject: "[pglens] CRITICAL Fired: <b>x</b> on prod" });
    expect((email as { html: string }).html).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect((email as { text: string }).text).toContain("Value: pg_stat_activity.max_query_duration_seconds = 900 s (> 600 s)");
  });

  // #47 item 7: a clear says what cleared it, keeps the value it fired with apart, and looks resolved.
  describe("a clear, on every channel type", () => {
    it("webhook: the resolution beside the fire's metric", () => {
      const body = JSON.parse((alertMessage(base, cleared, "alert_clear", 0, [], now) as { body: string }).body);
      expect(body).toMatchObject({
        event: "alert_clear",
        metric: { value: 900, text: "900 s (> 600 s)" },
        resolution: { reason: "back within the threshold", value: 12, text: "back within the threshold: now 12 s" },
        cleared_at: "2026-11-23T10:30:00.000Z",
        open_seconds: 1800,
      });
    });

    it.each(["slack", "mattermost"] as const)("%s: green, a check mark, what resolved it, the value it fired with, how long it was open", (type) => {
      const m = alertMessage({ ...base, channel_type: type, webhook_url: `https://hooks.example/${type}` }, cleared, "alert_clear", 0, [], now) as {
        url: string;
        body: string;
        headers: Record<string, string>;
      };
      expect(m.headers.authorization).toBeUndefined();
      const body = JSON.parse(m.body);
      expect(body.text).toBe("✅ Resolved: long_running_queries on prod");
      expect(body.attachments[0]).toEqual({
        color: "#2ca02c",
        text: "A statement runs long",
        fields: [
          { title: "Severity", value: "critical", short: true },
          { title: "Server", value: "prod", short: true },
          { title: "Resolved", value: "back within the threshold: now 12 s", short: false },
          { title: "Fired with", value: "pg_stat_activity.max_query_duration_seconds = 900 s (> 600 s)", short: false },
          { title: "Open for", value: "30m", short: true },
        ],
      });
      const fire = JSON.parse(
        (alertMessage({ ...base, channel_type: type, webhook_url: "https://hooks.example/x" }, alert, "alert_fire", 0, [], now) as { body: string }).body,
      );
      expect(fire.text).toBe("🔴 Fired: long_running_queries on prod");
      expect(fire.attachments[0].color).toBe("#d62728");
    });

    it("email: a RESOLVED subject, a green heading, and the text a person reads", () => {
      const m = alertMessage(
        { ...base, channel_type: "email", smtp: { host: "smtp", port: 25, username: null, password: null, use_tls: false }, from_address: "pglens@x.io" },
        { ...cleared, database_name: "shop" },
        "alert_clear",
        0,
        ["dba@x.io"],
        now,
      ) as { subject: string; text: string; html: string };
      expect(m.subject).toBe("[pglens] RESOLVED: long_running_queries on prod");
      expect(m.text).toBe(
        [
          "✅ Resolved: long_running_queries on prod",
          "A statement runs long",
          "Severity: critical",
          "Server: prod (db.internal:5432)",
          "Database: shop",
          "Resolved: back within the threshold: now 12 s",
          "Fired with: pg_stat_activity.max_query_duration_seconds = 900 s (> 600 s)",
          "Triggered: 2026-11-23T10:00:00.000Z",
          "Cleared: 2026-11-23T10:30:00.000Z (open for 30m)",
        ].join("\n"),
      );
      expect(m.html).toContain('<h3 style="color:#2ca02c">✅ Resolved: long_running_queries on prod</h3>');
    });
  });

  it("links to the alert in pglens when public_url gives an address, on every channel type", () => {
    const linked = { ...alert, url: "https://pglens.example.com/alerts/7" };
    expect(JSON.parse((alertMessage(base, linked, "alert_fire", 0, [], now) as { body: string }).body).url).toBe("https://pglens.example.com/alerts/7");
    expect(JSON.parse((alertMessage(base, alert, "alert_fire", 0, [], now) as { body: string }).body).url).toBeNull();
    const slack = JSON.parse(
      (alertMessage({ ...base, channel_type: "slack", webhook_url: "https://hooks.example/s" }, linked, "alert_fire", 0, [], now) as { body: string }).body,
    );
    expect(slack.attachments[0].fields.at(-1)).toEqual({ title: "In pglens", value: "https://pglens.example.com/alerts/7", short: false });
    const mail = alertMessage(
      { ...base, channel_type: "email", smtp: { host: "smtp", port: 25, username: null, password: null, use_tls: false }, from_address: "pglens@x.io" },
      linked,
      "alert_fire",
      0,
      ["dba@x.io"],
      now,
    ) as { text: string };
    expect(mail.text).toContain("Open in pglens: https://pglens.example.com/alerts/7");
  });

  it("shows units as people read them", () => {
    expect(withUnit(93.456, "percent")).toBe("93.46%");
    expect(withUnit(1536, "bytes")).toBe("1.5 KiB");
    expect(withUnit(5 * 1024 ** 3, "bytes")).toBe("5.0 GiB");
    expect(withUnit(512, "bytes")).toBe("512 B");
    expect(withUnit(3, "deadlocks")).toBe("3 deadlocks");
    expect(withUnit(0.5, "ratio")).toBe("0.5");
    expect(withUnit(null, "percent")).toBe("");
  });

  it("tests a channel with a real alert's message for a sample alert marked as a test", () => {
    const body = JSON.parse((testMessage(base, [], now) as { body: string }).body);
    const real = JSON.parse((alertMessage(base, alert, "alert_fire", 0, [], now) as { body: string }).body);
    expect(Object.keys(body).sort()).toEqual(Object.keys(real).sort());
    expect(body).toMatchObject({ event: "alert_fire", test: true, title: "pglens test alert" });
    const slack = JSON.parse((testMessage({ ...base, channel_type: "slack", webhook_url: "https://hooks.example/s" }, [], now) as { body: string }).body);
    expect(slack.text).toBe("[TEST] 🔵 Fired: pglens test alert on example-server");
    const mail = testMessage(
      { ...base, channel_type: "email", smtp: { host: "smtp", port: 25, username: null, password: null, use_tls: false }, from_address: "pglens@x.io" },
      ["dba@x.io"],
      now,
    ) as { subject: string; text: string };
    expect(mail.subject).toBe("[pglens] [TEST] INFO Fired: pglens test alert on example-server");
    expect(mail.text).toContain("a sample alert, not a real one");
  });

  it("refuses a template that does not parse", () => {
    expect(() => checkTemplate("{{#open}} never closed", "template_alert_fire")).toThrow(/template_alert_fire: the template does not parse/);
    expect(() => checkTemplate("{{AlertTitle}}", "template_alert_fire")).not.toThrow();
  });
});
