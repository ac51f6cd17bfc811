/**
 * One message for several alerts that fired together (one correlation group: the same server or cluster within
 * the correlation window), so a storm reaches a channel as one message listing them, not one message each.
 * Pure, like payloads.ts; channels with a custom fire template get one message per alert instead.
 */
import {
  type AlertFacts,
  type Message,
  type OpenChannel,
  alertView,
  chatAttachment,
  defaultText,
  escapeHtml,
  headline,
  http,
  webhookAlert,
} from "./payloads.ts";

/** Alerts listed one by one in a message; the rest are counted. */
export const MAX_LISTED = 20;

const RANK: Record<string, number> = { critical: 3, warning: 2, info: 1 };

/** "db1, db2 and 3 more" */
function names(all: readonly string[]): string {
  const distinct = [...new Set(all)];
  return distinct.length <= 3 ? distinct.join(", ") : `${distinct.slice(0, 3).join(", ")} and ${distinct.length - 3} more`;
}

export function groupMessage(c: OpenChannel, correlationId: number, alerts: readonly AlertFacts[], recipients: string[], now: Date): Message {
  const sorted = [...alerts].sort((a, b) => (RANK[b.severity] ?? 0) - (RANK[a.severity] ?? 0) || a.id - b.id);
  const views = sorted.map((a) => alertView(a, "alert_fire", 0, now));
  const worst = views[0];
  const listed = views.slice(0, MAX_LISTED);
  const more = views.length - listed.length;
  const title = `${worst.SeverityEmoji} Fired: ${alerts.length} alerts on ${names(sorted.map((a) => a.server.name))}`;
  const moreLine = more > 0 ? `and ${more} more: list them in pglens (GET /api/v1/alerts?correlation_id=${correlationId})` : "";
  switch (c.channel_type) {
    case "webhook":
      return http(c, {
        event: "alert_group",
        correlation_id: correlationId,
        count: alerts.length,
        severity: worst.Severity,
        alerts: sorted.map((a, i) => webhookAlert(a, views[i], "alert_fire", now)),
      });
    case "slack":
    case "mattermost":
      return http(c, {
        text: [title, moreLine].filter(Boolean).join("\n"),
        attachments: listed.map((v) => ({ ...chatAttachment(v, "alert_fire"), title: headline(v, "alert_fire") })),
      });
    case "email": {
      const sections = listed.map((v) => defaultText(v, "alert_fire"));
      const text = [title, ...sections, moreLine].filter(Boolean).join("\n\n");
      const html = `<h3 style="color:${worst.SeverityColor}">${escapeHtml(title)}</h3>${sections.map((s) => `<pre>${escapeHtml(s)}</pre>`).join("")}${
        moreLine ? `<p>${escapeHtml(moreLine)}</p>` : ""
      }`;
      return {
        transport: "email",
        to: recipients,
        subject: `[pglens] ${worst.Severity.toUpperCase()} Fired: ${alerts.length} alerts on ${names(sorted.map((a) => a.server.name))}`,
        text,
        html,
      };
    }
  }
}
