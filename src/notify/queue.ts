/**
 * The notification queue and history (one table). Alert changes queue one row per (alert, channel, kind,
 * sequence): the unique key makes a second alerter's insert a no-op. Senders claim due rows with a lease, so
 * several instances never send the same row at once; a crashed sender's lease runs out and the row is tried
 * again.
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
  let queued = 0;
  for (const item of items) {
    const place = places.find((p) => p.id === item.alert_id);
    if (!place) continue;
    for (const channelId of channelsFor(channels, overrides, place)) {
      const rows = await db.query("INSERT INTO notifications (channel_id, alert_id, kind, sequence) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id", [
        channelId,
        item.alert_id,
        item.kind,
        item.sequence,
      ]);
      queued += rows.length;
    }
  }
  return queued;
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

const LEASE_SECONDS = 120;

/** Claims up to `limit` due rows (pending, retrying, or sending with a lapsed lease). */
export async function claimDue(db: Queryable, limit = 50): Promise<NotificationRow[]> {
  return db.query<NotificationRow>(
    `UPDATE notifications SET status = 'sending', attempts = attempts + 1, claimed_until = now() + make_interval(secs => ${LEASE_SECONDS})
      WHERE id IN (SELECT id FROM notifications
                    WHERE status IN ('pending', 'retrying', 'sending') AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
                    ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id::int AS id, channel_id, alert_id::int AS alert_id, kind, sequence, status, attempts, next_attempt_at, last_error, created_at, sent_at`,
  );
}

export async function recordSent(db: Queryable, id: number): Promise<void> {
  await db.query("UPDATE notifications SET status = 'sent', sent_at = now(), claimed_until = NULL, last_error = NULL WHERE id = $1", [id]);
}

export async function recordSuppressed(db: Queryable, id: number, why: string): Promise<void> {
  await db.query("UPDATE notifications SET status = 'suppressed', claimed_until = NULL, last_error = $2 WHERE id = $1", [id, why]);
}

export interface RetryPolicy {
  maxAttempts: number;
  /** Wait before the 2nd, 3rd, ... attempt; the last value repeats. */
  retryMinutes: readonly number[];
}

/** A failed attempt: tried again after the next wait, or failed for good after the last attempt. */
export async function recordFailure(db: Queryable, row: NotificationRow, error: string, policy: RetryPolicy): Promise<void> {
  const retry = row.attempts < policy.maxAttempts;
  const wait = policy.retryMinutes[Math.min(row.attempts - 1, policy.retryMinutes.length - 1)] ?? 0;
  await db.query(`UPDATE notifications SET status = $2, last_error = $3, claimed_until = NULL, next_attempt_at = now() + make_interval(secs => $4) WHERE id = $1`, [
    row.id,
    retry ? "retrying" : "failed",
    error,
    retry ? wait * 60 : 0,
  ]);
}

export const channelHistory = (db: Queryable, channelId: number, limit: number) =>
  db.query<NotificationRow>(
    `SELECT id::int AS id, channel_id, alert_id::int AS alert_id, kind, sequence, status, attempts, next_attempt_at, last_error, created_at, sent_at
       FROM notifications WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [channelId, limit],
  );
