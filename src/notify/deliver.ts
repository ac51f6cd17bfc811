/**
 * One delivery pass, the same on Node and Workers: expire notices past their age, claim due ones, and send
 * each channel's in order, channels concurrently (a dead receiver delays only its own channel). The fires of one
 * correlation group claimed together go out as one message (group-message.ts). Each message is built from the
 * alert as it is now; outcomes are recorded (sent; retrying after a wait; expired past
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
import { groupMessage } from "./group-message.ts";
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
  correlation_id: number;
  connection_id: number;
  server_name: string;
  host: string;
  port: number;
  cluster_id: number | null;
  group_id: number | null;
};
type Outcome = "sent" | "failed" | "suppressed" | "lost";
type Opened = Awaited<ReturnType<typeof openChannel>> & { recipients: string[] };

/** The correlation group of each alert. */
async function correlationGroups(db: Driver, alertIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await db.query<{ id: number; correlation_id: number }>(
    "SELECT id::int AS id, correlation_id::int AS correlation_id FROM alerts WHERE id = ANY($1::bigint[])",
    [alertIds],
  );
  return new Map(rows.map((r) => [r.id, r.correlation_id]));
}

/**
 * A channel's notices in the order they go out: each alone, except that the fires of one correlation group
 * travel together, at the place of the group's first (when `grouping`; a custom fire template renders one alert).
 */
export function batchByGroup(rows: readonly NotificationRow[], groups: ReadonlyMap<number, number>, grouping: boolean): NotificationRow[][] {
  const batches: NotificationRow[][] = [];
  const open = new Map<number, NotificationRow[]>();
  for (const n of rows) {
    const group = groups.get(n.alert_id);
    if (!grouping || n.kind !== "alert_fire" || group === undefined) {
      batches.push([n]);
      continue;
    }
    const batch = open.get(group);
    if (batch) batch.push(n);
    else {
      const fresh = [n];
      open.set(group, fresh);
      batches.push(fresh);
    }
  }
  return batches;
}

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

  const loadAlert = async (id: number): Promise<AlertRow> =>
    (
      await db.query<AlertRow>(
        `SELECT a.id::int AS id, a.correlation_id::int AS correlation_id, a.title, a.description, a.severity, a.status, a.triggered_at, a.cleared_at, a.metric_name,
                a.metric_value, a.threshold_value, a.operator, a.database_name, a.clear_reason, a.clear_value, r.metric_unit AS unit, a.connection_id,
                c.name AS server_name, c.host, c.port, c.cluster_id, cl.group_id
           FROM alerts a JOIN connections c ON c.id = a.connection_id LEFT JOIN clusters cl ON cl.id = c.cluster_id LEFT JOIN alert_rules r ON r.id = a.rule_id
          WHERE a.id = $1`,
        [id],
      )
    )[0];
  const factsOf = (alert: AlertRow): AlertFacts => ({
    ...alert,
    server: { name: alert.server_name, host: alert.host, port: alert.port },
    url: alertUrl(config, alert.id),
  });

  /** Suppressed while a blackout covers the alert, except the clear of a fire that was delivered. */
  const suppressed = async (n: NotificationRow, alert: AlertRow): Promise<boolean> => {
    const place = { connectionId: alert.connection_id, clusterId: alert.cluster_id, groupId: alert.group_id };
    const covering = blackouts.find((b) => {
      const c = coverage(b, place);
      return c !== null && ("all" in c || c.database === alert.database_name);
    });
    // A receiver that was told of a fire must hear of its clear, or its incident never resolves.
    if (!covering || (n.kind === "alert_clear" && (await fireWasSent(db, n.alert_id, n.channel_id)))) return false;
    await recordSuppressed(db, n.id, token, `suppressed by blackout ${covering.id}`);
    return true;
  };

  /** Sends one message for `rows` (one notice, or the fires of one correlation group) and records the outcome of each. */
  const deliver = async (rows: NotificationRow[], opened: Opened): Promise<Record<Outcome, number>> => {
    const tally: Record<Outcome, number> = { sent: 0, failed: 0, suppressed: 0, lost: 0 };
    const held: Array<{ n: NotificationRow; alert: AlertRow; attempt: number }> = [];
    for (const n of rows) {
      const alert = await loadAlert(n.alert_id);
      if (await suppressed(n, alert)) tally.suppressed++;
      else {
        const attempt = await confirmClaim(db, n.id, token, lease);
        if (attempt === null) tally.lost++;
        else held.push({ n, alert, attempt });
      }
    }
    if (held.length === 0) return tally;
    const first = held[0];
    try {
      const message =
        held.length === 1
          ? alertMessage(opened.channel, factsOf(first.alert), first.n.kind, first.n.kind === "reminder" ? first.n.sequence : 0, opened.recipients, now)
          : groupMessage(
              opened.channel,
              first.alert.correlation_id,
              held.map((h) => factsOf(h.alert)),
              opened.recipients,
              now,
            );
      await send(opened.channel, withDeliveryId(message, String(first.n.id)), transports, deny_private_networks);
      for (const h of held) await recordSent(db, h.n.id, token);
      tally.sent += held.length;
    } catch (err) {
      const error = redact((err as Error).message, opened.secrets);
      for (const h of held) await recordFailure(db, h.n.id, token, h.attempt, error, policy);
      log.warn("notification not delivered", { notification_ids: held.map((h) => h.n.id), channel_id: first.n.channel_id, attempt: first.attempt, error });
      tally.failed += held.length;
    }
    return tally;
  };

  const byChannel = new Map<number, NotificationRow[]>();
  // UPDATE ... RETURNING keeps no order: each channel's notices go out oldest first.
  for (const n of due.sort((a, b) => a.id - b.id)) byChannel.set(n.channel_id, [...(byChannel.get(n.channel_id) ?? []), n]);
  const groups = await correlationGroups(
    db,
    due.map((n) => n.alert_id),
  );
  await eachLimited([...byChannel.values()], CHANNEL_CONCURRENCY, async (rows) => {
    const row = await getChannel(db, rows[0].channel_id);
    const recipients = row.channel_type === "email" ? (await listRecipients(db, row.id)).filter((r) => r.enabled).map((r) => r.email_address) : [];
    const opened = { ...(await openChannel(row, config.secret)), recipients };
    const batches = batchByGroup(rows, groups, !opened.channel.templates.alert_fire);
    for (const [i, batch] of batches.entries()) {
      const tally = await deliver(batch, opened);
      result.sent += tally.sent;
      result.failed += tally.failed;
      result.suppressed += tally.suppressed;
      // In order: what follows a failed notice waits for its retry.
      if (tally.failed) {
        await releaseClaims(
          db,
          batches.slice(i + 1).flatMap((b) => b.map((r) => r.id)),
          token,
        );
        break;
      }
    }
  });
  return result;
}
