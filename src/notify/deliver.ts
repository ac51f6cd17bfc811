/**
 * One delivery pass, the same on Node and Workers: claim due notifications, build each message from the
 * alert as it is now, send it, and record the outcome (sent; retrying after a wait; failed after the last
 * attempt; suppressed while a blackout covers the server). Errors are stored and logged with the channel's
 * secrets redacted.
 */
import type { Driver } from "../../drivers/types.ts";
import { coverage } from "../blackouts/scope.ts";
import type { Config } from "../config.ts";
import { activeBlackouts } from "../datastore/blackouts.ts";
import { getChannel, listRecipients } from "../datastore/notification-channels.ts";
import type { Logger } from "../log.ts";
import { openChannel, redact } from "./open-channel.ts";
import { type AlertFacts, alertMessage } from "./payloads.ts";
import { claimDue, recordFailure, recordSent, recordSuppressed } from "./queue.ts";
import { type Transports, send } from "./transports.ts";

export interface DeliveryResult {
  sent: number;
  failed: number;
  suppressed: number;
}

type AlertRow = Omit<AlertFacts, "server"> & { connection_id: number; server_name: string; host: string; port: number; cluster_id: number | null; group_id: number | null };

export async function deliverOnce(db: Driver, config: Config, log: Logger, transports: Transports, now = new Date()): Promise<DeliveryResult> {
  const result: DeliveryResult = { sent: 0, failed: 0, suppressed: 0 };
  const due = await claimDue(db);
  if (due.length === 0) return result;
  const blackouts = await activeBlackouts(db);
  const policy = { maxAttempts: config.notifications.max_attempts, retryMinutes: config.notifications.retry_minutes };
  // A pass often sends several notices on one channel: read and unseal each channel once (the loop is sequential).
  const channels = new Map<number, Awaited<ReturnType<typeof openChannel>> & { recipients: string[] }>();
  const opened = async (id: number) => {
    let got = channels.get(id);
    if (!got) {
      const row = await getChannel(db, id);
      const recipients = row.channel_type === "email" ? (await listRecipients(db, id)).filter((r) => r.enabled).map((r) => r.email_address) : [];
      got = { ...(await openChannel(row, config.secret)), recipients };
      channels.set(id, got);
    }
    return got;
  };
  for (const n of due) {
    const [alert] = await db.query<AlertRow>(
      `SELECT a.id::int AS id, a.title, a.description, a.severity, a.status, a.triggered_at, a.cleared_at, a.metric_name, a.metric_value, a.threshold_value, a.operator,
              a.database_name, a.connection_id, c.name AS server_name, c.host, c.port, c.cluster_id, cl.group_id
         FROM alerts a JOIN connections c ON c.id = a.connection_id LEFT JOIN clusters cl ON cl.id = c.cluster_id WHERE a.id = $1`,
      [n.alert_id],
    );
    const place = { connectionId: alert.connection_id, clusterId: alert.cluster_id, groupId: alert.group_id };
    const covering = blackouts.find((b) => {
      const c = coverage(b, place);
      return c !== null && ("all" in c || c.database === alert.database_name);
    });
    if (covering) {
      await recordSuppressed(db, n.id, `suppressed by blackout ${covering.id}`);
      result.suppressed++;
      continue;
    }
    const { channel, secrets, recipients } = await opened(n.channel_id);
    try {
      const facts: AlertFacts = { ...alert, server: { name: alert.server_name, host: alert.host, port: alert.port } };
      await send(channel, alertMessage(channel, facts, n.kind, n.kind === "reminder" ? n.sequence : 0, recipients, now), transports, config.notifications.deny_private_networks);
      await recordSent(db, n.id);
      result.sent++;
    } catch (err) {
      const error = redact((err as Error).message, secrets);
      await recordFailure(db, n, error, policy);
      log.warn("notification not delivered", { notification_id: n.id, channel_id: n.channel_id, alert_id: n.alert_id, attempt: n.attempts, error });
      result.failed++;
    }
  }
  return result;
}
