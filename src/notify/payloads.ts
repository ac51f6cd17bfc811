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
const EVENT_WORD: Record<NotificationKind, string> = { alert_fire: "Fired", alert_clear: "Cleared", reminder: "Still active" };

function duration(from: Date, to: Date): string {
  const minutes = Math.max(0, Math.round((to.getTime() - from.getTime()) / 60_000));
  return minutes < 60 ? `${minutes}m` : `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

export function alertView(a: AlertFacts, kind: NotificationKind, reminderCount: number, now: Date): AlertView {
  return {
    AlertID: a.id,
    AlertTitle: a.title,
    AlertDescription: a.description,
    Severity: a.severity,
    SeverityColor: COLORS[a.severity] ?? "#888888",
    SeverityEmoji: EMOJI[a.severity] ?? "",
    Status: a.status,
    TriggeredAt: a.triggered_at.toISOString(),
    ClearedAt: a.cleared_at?.toISOString() ?? "",
    Duration: duration(a.triggered_at, a.cleared_at ?? now),
    MetricName: a.metric_name,
    MetricValue: a.metric_value === null ? "" : String(a.metric_value),
    ThresholdValue: a.threshold_value === null ? "" : String(a.threshold_value),
    Operator: a.operator ?? "",
    ServerName: a.server.name,
    ServerHost: a.server.host,
    ServerPort: a.server.port,
    DatabaseName: a.database_name,
    ReminderCount: reminderCount,
    Timestamp: now.toISOString(),
    EventType: kind,
  };
}

const headline = (v: AlertView, kind: NotificationKind) => `${v.SeverityEmoji} ${EVENT_WORD[kind]}: ${v.AlertTitle} on ${v.ServerName}`.trim();

function defaultText(v: AlertView, kind: NotificationKind): string {
  const lines = [headline(v, kind), v.AlertDescription, `Severity: ${v.Severity}`, `Server: ${v.ServerName} (${v.ServerHost}:${v.ServerPort})`];
  if (v.DatabaseName) lines.push(`Database: ${v.DatabaseName}`);
  if (v.MetricName) lines.push(`Metric: ${v.MetricName} = ${v.MetricValue}${v.Operator ? ` (${v.Operator} ${v.ThresholdValue})` : ""}`);
  lines.push(`Triggered: ${v.TriggeredAt}`);
  if (kind === "alert_clear") lines.push(`Cleared: ${v.ClearedAt} (after ${v.Duration})`);
  if (kind === "reminder") lines.push(`Active for ${v.Duration} (reminder ${v.ReminderCount})`);
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

function http(c: OpenChannel, body: unknown | undefined): Message {
  const url = (c.channel_type === "webhook" ? c.endpoint_url : c.webhook_url) ?? "";
  const method = c.channel_type === "webhook" ? c.http_method : "POST";
  const headers = c.channel_type === "webhook" ? webhookHeaders(c) : {};
  if (body === undefined) return { transport: "http", method, url, headers };
  return { transport: "http", method, url, headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) };
}

export function alertMessage(c: OpenChannel, a: AlertFacts, kind: NotificationKind, reminderCount: number, recipients: string[], now: Date): Message {
  const v = alertView(a, kind, reminderCount, now);
  const template = c.templates[kind];
  switch (c.channel_type) {
    case "webhook":
      return http(
        c,
        template
          ? render(template, v, "json")
          : {
              event: kind,
              alert_id: a.id,
              title: a.title,
              description: a.description,
              severity: a.severity,
              server: a.server,
              database: a.database_name || null,
              metric: a.metric_name ? { name: a.metric_name, value: a.metric_value, threshold: a.threshold_value, operator: a.operator } : null,
              triggered_at: v.TriggeredAt,
              cleared_at: a.cleared_at?.toISOString() ?? null,
            },
      );
    case "slack":
    case "mattermost": {
      const text = template ? render(template, v, "text") : headline(v, kind);
      const fields = [
        { title: "Severity", value: v.Severity, short: true },
        { title: "Server", value: `${v.ServerName}${v.DatabaseName ? ` / ${v.DatabaseName}` : ""}`, short: true },
        ...(v.MetricName ? [{ title: "Metric", value: `${v.MetricName} = ${v.MetricValue}${v.Operator ? ` (${v.Operator} ${v.ThresholdValue})` : ""}`, short: false }] : []),
      ];
      return http(c, { text, attachments: [{ color: kind === "alert_clear" ? "#2ca02c" : v.SeverityColor, text: v.AlertDescription, fields }] });
    }
    case "email": {
      const text = template ? render(template, v, "text") : defaultText(v, kind);
      const html = template
        ? `<pre>${render(template, v, "html")}</pre>`
        : `<h3 style="color:${v.SeverityColor}">${escapeHtml(headline(v, kind))}</h3><pre>${escapeHtml(defaultText(v, kind))}</pre>`;
      return { transport: "email", to: recipients, subject: `[pglens] ${v.Severity.toUpperCase()} ${EVENT_WORD[kind]}: ${v.AlertTitle} on ${v.ServerName}`, text, html };
    }
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const TEST_TEXT = (what: string) => `This is a test message from pglens to verify your ${what} configuration.`;

export function testMessage(c: OpenChannel, recipients: string[]): Message {
  switch (c.channel_type) {
    case "slack":
      return http(c, { text: TEST_TEXT("Slack webhook") });
    case "mattermost":
      return http(c, { text: TEST_TEXT("Mattermost webhook") });
    case "webhook":
      return http(c, { text: TEST_TEXT("webhook") });
    case "email":
      return { transport: "email", to: recipients, subject: "pglens test message", text: TEST_TEXT("email channel"), html: `<p>${TEST_TEXT("email channel")}</p>` };
  }
}
