/**
 * What a notification says, per channel type, as a pure function: the alert and its server in, an HTTP
 * request or an email out. Custom templates (Mustache) replace the default text; defaults cover everything.
 */
import { render, type AlertView } from "./templates.ts";

export type NotificationKind = "alert_fire" | "alert_clear" | "reminder";

export interface AlertFacts {
  id: number;
  title: string;
  description: string;
  severity: string;
  status: string;
  triggered_at: Date;
  cleared_at: Date | null;
  metric_name: string;
  metric_value: number | null;
  threshold_value: number | null;
  operator: string | null;
  database_name: string;
  server: { name: string; host: string; port: number };
  /** The rule's unit (percent, bytes, seconds, ...), when it has one. */
  unit?: string | null;
  /** Why it cleared, and the value that cleared it. */
  clear_reason?: string | null;
  clear_value?: number | null;
  /** A sample alert sent by a channel test. */
  test?: boolean;
  /** The alert's page in pglens, when public_url is configured. */
  url?: string | null;
}

/** A channel with its secrets opened, as the sender needs it. */
export interface OpenChannel {
  channel_type: "slack" | "mattermost" | "webhook" | "email";
  name: string;
  webhook_url: string | null;
  endpoint_url: string | null;
  http_method: "POST" | "PUT" | "PATCH";
  headers: Record<string, string>;
  auth_type: "basic" | "bearer" | "api_key" | null;
  auth_credentials: string | null;
  smtp: { host: string; port: number; username: string | null; password: string | null; use_tls: boolean } | null;
  from_address: string | null;
  from_name: string | null;
  templates: Partial<Record<NotificationKind, string | null>>;
}

export type Message =
  | { transport: "http"; method: string; url: string; headers: Record<string, string>; body?: string }
  | { transport: "email"; to: string[]; subject: string; text: string; html: string };

const COLORS: Record<string, string> = { critical: "#d62728", warning: "#ff9f1c", info: "#1f77b4" };
const EMOJI: Record<string, string> = { critical: "🔴", warning: "🟠", info: "🔵" };
const RESOLVED_COLOR = "#2ca02c";
const RESOLVED_EMOJI = "✅";
const EVENT_WORD: Record<NotificationKind, string> = { alert_fire: "Fired", alert_clear: "Resolved", reminder: "Still active" };

function duration(from: Date, to: Date): string {
  const minutes = Math.max(0, Math.round((to.getTime() - from.getTime()) / 60_000));
  if (minutes < 60) return `${minutes}m`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
  return `${Math.floor(minutes / 1440)}d ${Math.floor((minutes % 1440) / 60)}h`;
}

const BINARY = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
const short = (v: number) => String(Number(v.toPrecision(4)));

/** A value as people read it: with its unit, bytes with binary prefixes. */
export function withUnit(value: number | null, unit: string | null | undefined): string {
  if (value === null) return "";
  switch (unit) {
    case "percent":
      return `${short(value)}%`;
    case "bytes": {
      let v = value;
      let i = 0;
      while (Math.abs(v) >= 1024 && i < BINARY.length - 1) (v /= 1024), i++;
      return i === 0 ? `${value} B` : `${v.toFixed(1)} ${BINARY[i]}`;
    }
    case "seconds":
      return `${short(value)} s`;
    case "hours":
      return `${short(value)} h`;
    case undefined:
    case null:
    case "ratio":
      return short(value);
    default:
      return `${short(value)} ${unit}`;
  }
}

export function alertView(a: AlertFacts, kind: NotificationKind, reminderCount: number, now: Date): AlertView {
  const resolved = kind === "alert_clear";
  return {
    AlertID: a.id,
    AlertTitle: a.title,
    AlertDescription: a.description,
    Severity: a.severity,
    SeverityColor: resolved ? RESOLVED_COLOR : (COLORS[a.severity] ?? "#888888"),
    SeverityEmoji: resolved ? RESOLVED_EMOJI : (EMOJI[a.severity] ?? ""),
    Status: a.status,
    TriggeredAt: a.triggered_at.toISOString(),
    ClearedAt: a.cleared_at?.toISOString() ?? "",
    Duration: duration(a.triggered_at, a.cleared_at ?? now),
    MetricName: a.metric_name,
    MetricValue: a.metric_value === null ? "" : String(a.metric_value),
    MetricValueText: withUnit(a.metric_value, a.unit),
    ThresholdValue: a.threshold_value === null ? "" : String(a.threshold_value),
    ThresholdText: withUnit(a.threshold_value, a.unit),
    Operator: a.operator ?? "",
    Unit: a.unit ?? "",
    ClearReason: a.clear_reason ?? "",
    ClearValue: a.clear_value === null || a.clear_value === undefined ? "" : String(a.clear_value),
    ClearValueText: withUnit(a.clear_value ?? null, a.unit),
    ServerName: a.server.name,
    ServerHost: a.server.host,
    ServerPort: a.server.port,
    DatabaseName: a.database_name,
    ReminderCount: reminderCount,
    Timestamp: now.toISOString(),
    EventType: kind,
    IsTest: a.test === true,
    AlertURL: a.url ?? "",
  };
}

export const headline = (v: AlertView, kind: NotificationKind) =>
  `${v.IsTest ? "[TEST] " : ""}${v.SeverityEmoji} ${EVENT_WORD[kind]}: ${v.AlertTitle} on ${v.ServerName}`.trim();

/** The value against its threshold: `900 s (> 600 s)`. */
const reading = (v: AlertView) => `${v.MetricValueText}${v.Operator ? ` (${v.Operator} ${v.ThresholdText})` : ""}`;

/** What resolved it: `back within the threshold: now 12 s`. */
const resolution = (v: AlertView) => `${v.ClearReason || "cleared"}${v.ClearValueText ? `: now ${v.ClearValueText}` : ""}`;

export function defaultText(v: AlertView, kind: NotificationKind): string {
  const lines = [headline(v, kind), v.AlertDescription, `Severity: ${v.Severity}`, `Server: ${v.ServerName} (${v.ServerHost}:${v.ServerPort})`];
  if (v.DatabaseName) lines.push(`Database: ${v.DatabaseName}`);
  if (kind === "alert_clear") lines.push(`Resolved: ${resolution(v)}`);
  if (v.MetricName && v.MetricValueText) lines.push(`${kind === "alert_clear" ? "Fired with" : "Value"}: ${v.MetricName} = ${reading(v)}`);
  lines.push(`Triggered: ${v.TriggeredAt}`);
  if (kind === "alert_clear") lines.push(`Cleared: ${v.ClearedAt} (open for ${v.Duration})`);
  if (kind === "reminder") lines.push(`Open for ${v.Duration} (reminder ${v.ReminderCount})`);
  if (v.AlertURL) lines.push(`Open in pglens: ${v.AlertURL}`);
  if (v.IsTest) lines.push("This is a test message from pglens: a sample alert, not a real one.");
  return lines.filter(Boolean).join("\n");
}

/** Authorization and custom headers of a webhook channel. */
function webhookHeaders(c: OpenChannel): Record<string, string> {
  const headers: Record<string, string> = { ...c.headers };
  if (c.auth_type && c.auth_credentials) {
    if (c.auth_type === "bearer") headers.authorization = `Bearer ${c.auth_credentials}`;
    else if (c.auth_type === "basic") headers.authorization = `Basic ${btoa(c.auth_credentials)}`;
    else {
      const at = c.auth_credentials.indexOf(":");
      headers[c.auth_credentials.slice(0, at).trim()] = c.auth_credentials.slice(at + 1).trim();
    }
  }
  return headers;
}

export function http(c: OpenChannel, body: unknown | undefined): Message {
  const url = (c.channel_type === "webhook" ? c.endpoint_url : c.webhook_url) ?? "";
  const method = c.channel_type === "webhook" ? c.http_method : "POST";
  const headers = c.channel_type === "webhook" ? webhookHeaders(c) : {};
  if (body === undefined) return { transport: "http", method, url, headers };
  return {
    transport: "http",
    method,
    url,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

/** A webhook's JSON for one alert (without a custom template). */
export function webhookAlert(a: AlertFacts, v: AlertView, kind: NotificationKind, now: Date) {
  return {
    event: kind,
    alert_id: a.id,
    title: a.title,
    description: a.description,
    severity: a.severity,
    server: a.server,
    database: a.database_name || null,
    metric: a.metric_name
      ? {
          name: a.metric_name,
          value: a.metric_value,
          threshold: a.threshold_value,
          operator: a.operator,
          unit: a.unit ?? null,
          text: reading(v) || null,
        }
      : null,
    resolution: kind === "alert_clear" ? { reason: a.clear_reason ?? null, value: a.clear_value ?? null, text: resolution(v) } : null,
    triggered_at: v.TriggeredAt,
    cleared_at: a.cleared_at?.toISOString() ?? null,
    open_seconds: Math.max(0, Math.round(((a.cleared_at ?? now).getTime() - a.triggered_at.getTime()) / 1000)),
    test: a.test === true,
    url: a.url ?? null,
  };
}

/** Slack and Mattermost: one attachment for one alert. */
export function chatAttachment(v: AlertView, kind: NotificationKind) {
  const fields = [
    { title: "Severity", value: v.Severity, short: true },
    { title: "Server", value: `${v.ServerName}${v.DatabaseName ? ` / ${v.DatabaseName}` : ""}`, short: true },
    ...(kind === "alert_clear" ? [{ title: "Resolved", value: resolution(v), short: false }] : []),
    ...(v.MetricName && v.MetricValueText
      ? [{ title: kind === "alert_clear" ? "Fired with" : "Value", value: `${v.MetricName} = ${reading(v)}`, short: false }]
      : []),
    ...(kind === "alert_fire" ? [] : [{ title: "Open for", value: v.Duration, short: true }]),
    ...(v.AlertURL ? [{ title: "In pglens", value: v.AlertURL, short: false }] : []),
  ];
  return { color: v.SeverityColor, text: v.AlertDescription, fields };
}

export function alertMessage(c: OpenChannel, a: AlertFacts, kind: NotificationKind, reminderCount: number, recipients: string[], now: Date): Message {
  const v = alertView(a, kind, reminderCount, now);
  const template = c.templates[kind];
  switch (c.channel_type) {
    case "webhook":
      return http(c, template ? render(template, v, "json") : webhookAlert(a, v, kind, now));
    case "slack":
    case "mattermost":
      return http(c, { text: template ? render(template, v, "text") : headline(v, kind), attachments: [chatAttachment(v, kind)] });
    case "email": {
      const text = template ? render(template, v, "text") : defaultText(v, kind);
      const html = template
        ? `<pre>${render(template, v, "html")}</pre>`
        : `<h3 style="color:${v.SeverityColor}">${escapeHtml(headline(v, kind))}</h3><pre>${escapeHtml(defaultText(v, kind))}</pre>`;
      const what = kind === "alert_clear" ? "RESOLVED" : `${v.Severity.toUpperCase()} ${EVENT_WORD[kind]}`;
      return { transport: "email", to: recipients, subject: `[pglens]${v.IsTest ? " [TEST]" : ""} ${what}: ${v.AlertTitle} on ${v.ServerName}`, text, html };
    }
  }
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** What a channel test sends: a real alert's message for a sample alert marked as a test, so a receiver's parser can be checked. */
export function testMessage(c: OpenChannel, recipients: string[], now = new Date()): Message {
  const sample: AlertFacts = {
    id: 0,
    title: "pglens test alert",
    description: "A sample alert sent by a channel test; nothing is wrong.",
    severity: "info",
    status: "active",
    triggered_at: now,
    cleared_at: null,
    metric_name: "pg_stat_activity.count",
    metric_value: 42,
    threshold_value: 40,
    operator: ">",
    database_name: "",
    server: { name: "example-server", host: "db.example.com", port: 5432 },
    unit: "sessions",
    test: true,
  };
  return alertMessage(c, sample, "alert_fire", 0, recipients, now);
}
