/**
 * The notification queue and history (one table). Alert changes queue one row per (alert, channel, kind,
 * sequence): the unique key makes a second alerter's insert a no-op. Senders claim due rows with a short
 * lease under a token of their own, confirm (and renew) the claim right before each send, and write outcomes
 * only while they hold it, so a row is sent at most once while a claim holds; only a sender killed mid-send
 * leaves a row to be sent again (the receiver can drop it by its delivery id). A channel's rows go out in the
 * order they were queued: a later row waits while an earlier one waits for its retry or is held by another sender.
 */
import type { Queryable } from "../../drivers/types.ts";
import { listChannelOverrides, listChannels } from "../datastore/notification-channels.ts";
import { channelsFor } from "./channel-selection.ts";
import type { NotificationKind } from "./payloads.ts";

export interface Queued {
  alert_id: number;
  kind: NotificationKind;
  sequence: number;
}

/** Queues each item for the channels that fire for its alert's connection. */
export async function queueNotifications(db: Queryable, items: readonly Queued[]): Promise<number> {
  if (items.length === 0) return 0;
  const channels = await listChannels(db);
  if (channels.length === 0) return 0;
  const overrides = await listChannelOverrides(db);
  const places = await db.query<{ id: number; connectionId: number; clusterId: number | null; groupId: number | null }>(
    `SELECT a.id::int AS id, a.connection_id AS "connectionId", c.cluster_id AS "clusterId", cl.group_id AS "groupId"
       FROM alerts a JOIN connections c ON c.id = a.connection_id LEFT JOIN clusters cl ON cl.id = c.cluster_id WHERE a.id = ANY($1::bigint[])`,
    [items.map((i) => i.alert_id)],
  );
  const rows: Array<[number, number, NotificationKind, number]> = [];
  for (const item of items) {
    const place = places.find((p) => p.id === item.alert_id);
    if (place) for (const channelId of channelsFor(channels, overrides, place)) rows.push([channelId, item.alert_id, item.kind, item.sequence]);
  }
  if (rows.length === 0) return 0;
  // One statement: a delivery pass sees all of a round's notices or none, so a correlation group travels whole.
  const inserted = await db.query(
    `INSERT INTO notifications (channel_id, alert_id, kind, sequence)
     SELECT c, a, k, s FROM unnest($1::int[], $2::bigint[], $3::text[], $4::int[]) WITH ORDINALITY AS t(c, a, k, s, o) ORDER BY o
     ON CONFLICT DO NOTHING RETURNING id`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
  );
  return inserted.length;
}

/** Reminders due: active alerts whose last notice on a reminder channel is older than its interval. */
export async function queueReminders(db: Queryable): Promise<number> {
  const rows = await db.query(
    `INSERT INTO notifications (channel_id, alert_id, kind, sequence)
     SELECT n.channel_id, n.alert_id, 'reminder', count(*) FILTER (WHERE n.kind = 'reminder') + 1
       FROM notifications n
       JOIN alerts a ON a.id = n.alert_id AND a.status = 'active'
       JOIN notification_channels ch ON ch.id = n.channel_id AND ch.enabled AND ch.reminder_enabled
      WHERE n.kind IN ('alert_fire', 'reminder') AND n.status = 'sent'
      GROUP BY n.channel_id, n.alert_id, ch.reminder_interval_hours
     HAVING max(n.sent_at) <= now() - make_interval(hours => ch.reminder_interval_hours)
        AND NOT EXISTS (SELECT 1 FROM notifications p WHERE p.alert_id = n.alert_id AND p.channel_id = n.channel_id AND p.status IN ('pending', 'retrying', 'sending'))
     ON CONFLICT DO NOTHING RETURNING id`,
  );
  return rows.length;
}

export interface NotificationRow {
  id: number;
  channel_id: number;
  alert_id: number;
  kind: NotificationKind;
  sequence: number;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

const COLUMNS = "id::int AS id, channel_id, alert_id::int AS alert_id, kind, sequence, status, attempts, next_attempt_at, last_error, created_at, sent_at";
const OPEN = "('pending', 'retrying', 'sending')";

/**
 * Claims up to `limit` due rows for `token`, oldest first: pending, retrying, or sending under a lapsed lease;
 * never a row behind an earlier open row of its channel that is not due yet or is held by a live claim.
 */
export async function claimDue(db: Queryable, token: string, leaseSeconds: number, limit = 50): Promise<NotificationRow[]> {
  return db.query<NotificationRow>(
    `UPDATE notifications SET status = 'sending', claimed_until = now() + make_interval(secs => $2), claimed_by = $1
      WHERE id IN (SELECT n.id FROM notifications n
                    WHERE n.status IN ${OPEN} AND n.next_attempt_at <= now() AND (n.claimed_until IS NULL OR n.claimed_until < now())
                      AND NOT EXISTS (SELECT 1 FROM notifications o
                                       WHERE o.channel_id = n.channel_id AND o.id < n.id AND o.status IN ${OPEN}
                                         AND (o.next_attempt_at > now() OR o.claimed_until >= now()))
                    ORDER BY n.id LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [token, leaseSeconds, limit],
  );
}

/**
 * Right before a send: renews the claim if `token` still holds it and counts the attempt. Answers the attempt's
 * number, or null when the claim was lost (its lease lapsed and another sender took the row). A lapsed lease
 * nobody took is still this sender's: taking a row writes the taker's token.
 */
export async function confirmClaim(db: Queryable, id: number, token: string, leaseSeconds: number): Promise<number | null> {
  const [row] = await db.query<{ attempts: number }>(
    `UPDATE notifications SET attempts = attempts + 1, claimed_until = now() + make_interval(secs => $3)
      WHERE id = $1 AND claimed_by = $2 AND status = 'sending' RETURNING attempts`,
    [id, token, leaseSeconds],
  );
  return row ? row.attempts : null;
}

const HELD = "id = $1 AND claimed_by = $2";

export async function recordSent(db: Queryable, id: number, token: string): Promise<void> {
  await db.query(`UPDATE notifications SET status = 'sent', sent_at = now(), claimed_until = NULL, claimed_by = NULL, last_error = NULL WHERE ${HELD}`, [
    id,
    token,
  ]);
}

export async function recordSuppressed(db: Queryable, id: number, token: string, why: string): Promise<void> {
  await db.query(`UPDATE notifications SET status = 'suppressed', claimed_until = NULL, claimed_by = NULL, last_error = $3 WHERE ${HELD}`, [id, token, why]);
}

/** Hands claimed rows back untried (an earlier row of their channel just failed: they wait behind it). */
export async function releaseClaims(db: Queryable, ids: readonly number[], token: string): Promise<void> {
  if (!ids.length) return;
  await db.query(
    "UPDATE notifications SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'retrying' END, claimed_until = NULL, claimed_by = NULL WHERE id = ANY($1::bigint[]) AND claimed_by = $2",
    [ids, token],
  );
}

export interface RetryPolicy {
  /** Without it, a notice is retried until it is `maxAgeHours` old. */
  maxAttempts?: number;
  /** Wait before the 2nd, 3rd, ... attempt; the last value repeats. */
  retryMinutes: readonly number[];
  maxAgeHours: number;
}

/** A failed attempt (the `attempt`-th): tried again after the next wait; failed after maxAttempts; expired past its age. */
export async function recordFailure(db: Queryable, id: number, token: string, attempt: number, error: string, policy: RetryPolicy): Promise<void> {
  const wait = (policy.retryMinutes[Math.min(attempt - 1, policy.retryMinutes.length - 1)] ?? 0) * 60;
  const failed = policy.maxAttempts !== undefined && attempt >= policy.maxAttempts;
  await db.query(
    `UPDATE notifications
        SET status = CASE WHEN $4 THEN 'failed'
                          WHEN queued_at + make_interval(secs => $6) < now() + make_interval(secs => $5) THEN 'expired'
                          ELSE 'retrying' END,
            last_error = $3, claimed_until = NULL, claimed_by = NULL, next_attempt_at = now() + make_interval(secs => $5)
      WHERE ${HELD}`,
    [id, token, error, failed, wait, policy.maxAgeHours * 3600],
  );
}

/** Open rows older than the maximum age and not held by a live claim end `expired`; answers how many. */
export async function expireOld(db: Queryable, maxAgeHours: number): Promise<number> {
  const rows = await db.query(
    `UPDATE notifications SET status = 'expired', claimed_until = NULL, claimed_by = NULL
      WHERE status IN ${OPEN} AND queued_at < now() - make_interval(secs => $1) AND (claimed_until IS NULL OR claimed_until < now())
      RETURNING id`,
    [maxAgeHours * 3600],
  );
  return rows.length;
}

/** Hands a channel's failed and expired notices back to the queue, oldest first; answers how many. */
export async function redeliver(db: Queryable, channelId: number): Promise<number> {
  const rows = await db.query(
    `UPDATE notifications SET status = 'pending', attempts = 0, next_attempt_at = now(), queued_at = now(), last_error = NULL, claimed_until = NULL, claimed_by = NULL
      WHERE channel_id = $1 AND status IN ('failed', 'expired') RETURNING id`,
    [channelId],
  );
  return rows.length;
}

/** Whether the fire this clear ends was delivered on the channel (its clear must then follow, blackout or not). */
export async function fireWasSent(db: Queryable, alertId: number, channelId: number): Promise<boolean> {
  return (
    (
      await db.query("SELECT 1 FROM notifications WHERE alert_id = $1 AND channel_id = $2 AND kind = 'alert_fire' AND status = 'sent' LIMIT 1", [
        alertId,
        channelId,
      ])
    ).length > 0
  );
}

/** Notices per status, for /metrics. */
export const notificationCounts = (db: Queryable) =>
  db.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM notifications GROUP BY status");

export const channelHistory = (db: Queryable, channelId: number, limit: number) =>
  db.query<NotificationRow>(`SELECT ${COLUMNS} FROM notifications WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [channelId, limit]);
