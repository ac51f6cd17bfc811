/**
 * One delivery pass, the same on Node and Workers: expire notices past their age, claim due ones, and send
 * each channel's in order, channels concurrently (a dead receiver delays only its own channel). Each message is
 * built from the alert as it is now; outcomes are recorded (sent; retrying after a wait; expired past
 * notifications.max_age_hours; suppressed while a blackout covers the server, except the clear of a fire that
 * was delivered). Errors are stored and logged with the channel's secrets redacted.
 */
import type { Driver } from "../../drivers/types.ts";
import { coverage } from "../blackouts/scope.ts";
import type { Config } from "../config.ts";
import { activeBlackouts } from "../datastore/blackouts.ts";
import { getChannel, listRecipients } from "../datastore/notification-channels.ts";
import { eachLimited } from "../each-limited.ts";
import type { Logger } from "../log.ts";
import { openChannel, redact } from "./open-channel.ts";
import { type AlertFacts, alertMessage } from "./payloads.ts";
import { type NotificationRow, claimDue, confirmClaim, expireOld, fireWasSent, recordFailure, recordSent, recordSuppressed, releaseClaims } from "./queue.ts";
import { type Transports, send, withDeliveryId } from "./transports.ts";

export interface DeliveryResult {
  sent: number;
  failed: number;
  suppressed: number;
  expired: number;
}

export interface DeliveryOptions {
  /** How long a claim holds before it must be confirmed again (default 120 s; each send takes at most 10 s). */
  leaseSeconds?: number;
}

/** Channels sent to at once in one pass. */
const CHANNEL_CONCURRENCY = 8;
const LEASE_SECONDS = 120;

type AlertRow = Omit<AlertFacts, "server"> & {
  connection_id: number;
  server_name: string;
  host: string;
  port: number;
  cluster_id: number | null;
  group_id: number | null;
};
type Outcome = "sent" | "failed" | "suppressed" | "lost";

/** The alert's page in the console, where people reach pglens (public_url); none without it. */
const alertUrl = (config: Config, id: number) => (config.public_url ? `${config.public_url.replace(/\/+$/, "")}/alerts/${id}` : null);

export async function deliverOnce(
  db: Driver,
  config: Config,
  log: Logger,
  transports: Transports,
  now = new Date(),
  options: DeliveryOptions = {},
): Promise<DeliveryResult> {
  const result: DeliveryResult = { sent: 0, failed: 0, suppressed: 0, expired: 0 };
  const { max_attempts, retry_minutes, max_age_hours, deny_private_networks } = config.notifications;
  result.expired = await expireOld(db, max_age_hours);
  if (result.expired) log.warn("notifications expired undelivered", { count: result.expired, max_age_hours });
  const token = crypto.randomUUID();
  const lease = options.leaseSeconds ?? LEASE_SECONDS;
  const due = await claimDue(db, token, lease);
  if (due.length === 0) return result;
  const blackouts = await activeBlackouts(db);
  const policy = { maxAttempts: max_attempts, retryMinutes: retry_minutes, maxAgeHours: max_age_hours };

  const deliverOne = async (n: NotificationRow, opened: Awaited<ReturnType<typeof openChannel>> & { recipients: string[] }): Promise<Outcome> => {
    const [alert] = await db.query<AlertRow>(
      `SELECT a.id::int AS id, a.title, a.description, a.severity, a.status, a.triggered_at, a.cleared_at, a.metric_name, a.metric_value, a.threshold_value, a.operator,
              a.database_name, a.clear_reason, a.clear_value, r.metric_unit AS unit, a.connection_id, c.name AS server_name, c.host, c.port, c.cluster_id, cl.group_id
         FROM alerts a JOIN connections c ON c.id = a.connection_id LEFT JOIN clusters cl ON cl.id = c.cluster_id LEFT JOIN alert_rules r ON r.id = a.rule_id
        WHERE a.id = $1`,
      [n.alert_id],
    );
    const place = { connectionId: alert.connection_id, clusterId: alert.cluster_id, groupId: alert.group_id };
    const covering = blackouts.find((b) => {
      const c = coverage(b, place);
      return c !== null && ("all" in c || c.database === alert.database_name);
    });
    // A receiver that was told of a fire must hear of its clear, or its incident never resolves.
    if (covering && !(n.kind === "alert_clear" && (await fireWasSent(db, n.alert_id, n.channel_id)))) {
      await recordSuppressed(db, n.id, token, `suppressed by blackout ${covering.id}`);
      return "suppressed";
    }
    const attempt = await confirmClaim(db, n.id, token, lease);
    if (attempt === null) return "lost";
    try {
      const facts: AlertFacts = { ...alert, server: { name: alert.server_name, host: alert.host, port: alert.port }, url: alertUrl(config, alert.id) };
      const message = alertMessage(opened.channel, facts, n.kind, n.kind === "reminder" ? n.sequence : 0, opened.recipients, now);
      await send(opened.channel, withDeliveryId(message, String(n.id)), transports, deny_private_networks);
      await recordSent(db, n.id, token);
      return "sent";
    } catch (err) {
      const error = redact((err as Error).message, opened.secrets);
      await recordFailure(db, n.id, token, attempt, error, policy);
      log.warn("notification not delivered", { notification_id: n.id, channel_id: n.channel_id, alert_id: n.alert_id, attempt, error });
      return "failed";
    }
  };

  const byChannel = new Map<number, NotificationRow[]>();
  // UPDATE ... RETURNING keeps no order: each channel's notices go out oldest first.
  for (const n of due.sort((a, b) => a.id - b.id)) byChannel.set(n.channel_id, [...(byChannel.get(n.channel_id) ?? []), n]);
  await eachLimited([...byChannel.values()], CHANNEL_CONCURRENCY, async (rows) => {
    const row = await getChannel(db, rows[0].channel_id);
    const recipients = row.channel_type === "email" ? (await listRecipients(db, row.id)).filter((r) => r.enabled).map((r) => r.email_address) : [];
    const opened = { ...(await openChannel(row, config.secret)), recipients };
    for (const [i, n] of rows.entries()) {
      const outcome = await deliverOne(n, opened);
      if (outcome !== "lost") result[outcome]++;
      // In order: what follows a failed notice waits for its retry.
      if (outcome === "failed") {
        await releaseClaims(
          db,
          rows.slice(i + 1).map((r) => r.id),
          token,
        );
        break;
      }
    }
  });
  return result;
}
