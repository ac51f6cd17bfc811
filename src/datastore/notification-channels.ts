/** Notification channels, their recipients and overrides in the datastore. Secrets stay sealed here. */
import type { Queryable } from "../../drivers/types.ts";
import { NotFoundError } from "../errors.ts";

export const CHANNEL_TYPES = ["slack", "mattermost", "webhook", "email"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export interface ChannelRow {
  id: number;
  name: string;
  description: string;
  channel_type: ChannelType;
  enabled: boolean;
  is_estate_default: boolean;
  webhook_url_secret: string | null;
  /** Masked for display (rows written before migration 35: the plain URL). */
  endpoint_url: string | null;
  endpoint_url_secret: string | null;
  http_method: "POST" | "PUT" | "PATCH";
  headers_secret: string | null;
  header_names: string[];
  auth_type: "basic" | "bearer" | "api_key" | null;
  auth_credentials_secret: string | null;
  smtp_host: string | null;
  smtp_port: number;
  smtp_username_secret: string | null;
  smtp_password_secret: string | null;
  smtp_use_tls: boolean;
  from_address: string | null;
  from_name: string | null;
  template_alert_fire: string | null;
  template_alert_clear: string | null;
  template_reminder: string | null;
  reminder_enabled: boolean;
  reminder_interval_hours: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** Columns a caller may set (secrets already sealed). */
export type ChannelFields = Omit<ChannelRow, "id" | "created_by" | "created_at" | "updated_at">;
const SETTABLE: ReadonlyArray<keyof ChannelFields> = [
  "name",
  "description",
  "channel_type",
  "enabled",
  "is_estate_default",
  "webhook_url_secret",
  "endpoint_url",
  "endpoint_url_secret",
  "http_method",
  "headers_secret",
  "header_names",
  "auth_type",
  "auth_credentials_secret",
  "smtp_host",
  "smtp_port",
  "smtp_username_secret",
  "smtp_password_secret",
  "smtp_use_tls",
  "from_address",
  "from_name",
  "template_alert_fire",
  "template_alert_clear",
  "template_reminder",
  "reminder_enabled",
  "reminder_interval_hours",
];

export const listChannels = (db: Queryable) => db.query<ChannelRow>("SELECT * FROM notification_channels ORDER BY lower(name), id");

export async function getChannel(db: Queryable, id: number): Promise<ChannelRow> {
  const [row] = await db.query<ChannelRow>("SELECT * FROM notification_channels WHERE id = $1", [id]);
  if (!row) throw new NotFoundError(`notification channel ${id} not found`);
  return row;
}

export async function createChannel(db: Queryable, f: ChannelFields & { created_by: string }): Promise<ChannelRow> {
  const columns = [...SETTABLE, "created_by" as const];
  const [row] = await db.query<ChannelRow>(
    `INSERT INTO notification_channels (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING *`,
    columns.map((k) => f[k]),
  );
  return row;
}

export async function updateChannel(db: Queryable, id: number, f: ChannelFields): Promise<ChannelRow> {
  const [row] = await db.query<ChannelRow>(
    `UPDATE notification_channels SET ${SETTABLE.map((k, i) => `${k} = $${i + 2}`).join(", ")}, updated_at = now() WHERE id = $1 RETURNING *`,
    [id, ...SETTABLE.map((k) => f[k])],
  );
  if (!row) throw new NotFoundError(`notification channel ${id} not found`);
  return row;
}

export async function deleteChannel(db: Queryable, id: number): Promise<void> {
  if ((await db.query("DELETE FROM notification_channels WHERE id = $1 RETURNING id", [id])).length === 0)
    throw new NotFoundError(`notification channel ${id} not found`);
}

export interface RecipientRow {
  id: number;
  channel_id: number;
  email_address: string;
  display_name: string;
  enabled: boolean;
  created_at: Date;
}

export const listRecipients = (db: Queryable, channelId: number) =>
  db.query<RecipientRow>("SELECT * FROM email_recipients WHERE channel_id = $1 ORDER BY lower(email_address)", [channelId]);

/** The recipients of several channels in one statement, per channel (a channel without any: absent). */
export async function recipientsOf(db: Queryable, channelIds: readonly number[]): Promise<Map<number, RecipientRow[]>> {
  const rows = channelIds.length
    ? await db.query<RecipientRow>("SELECT * FROM email_recipients WHERE channel_id = ANY($1::int[]) ORDER BY channel_id, lower(email_address)", [channelIds])
    : [];
  const byChannel = new Map<number, RecipientRow[]>();
  for (const r of rows) {
    const list = byChannel.get(r.channel_id);
    if (list) list.push(r);
    else byChannel.set(r.channel_id, [r]);
  }
  return byChannel;
}

export async function addRecipient(
  db: Queryable,
  channelId: number,
  r: { email_address: string; display_name: string; enabled: boolean },
): Promise<RecipientRow> {
  const [row] = await db.query<RecipientRow>(
    "INSERT INTO email_recipients (channel_id, email_address, display_name, enabled) VALUES ($1, $2, $3, $4) RETURNING *",
    [channelId, r.email_address, r.display_name, r.enabled],
  );
  return row;
}

export async function updateRecipient(
  db: Queryable,
  channelId: number,
  id: number,
  r: { email_address: string; display_name: string; enabled: boolean },
): Promise<RecipientRow> {
  const [row] = await db.query<RecipientRow>(
    "UPDATE email_recipients SET email_address = $3, display_name = $4, enabled = $5 WHERE channel_id = $1 AND id = $2 RETURNING *",
    [channelId, id, r.email_address, r.display_name, r.enabled],
  );
  if (!row) throw new NotFoundError(`recipient ${id} of channel ${channelId} not found`);
  return row;
}

export async function deleteRecipient(db: Queryable, channelId: number, id: number): Promise<void> {
  if ((await db.query("DELETE FROM email_recipients WHERE channel_id = $1 AND id = $2 RETURNING id", [channelId, id])).length === 0)
    throw new NotFoundError(`recipient ${id} of channel ${channelId} not found`);
}

export interface ChannelOverride {
  channel_id: number;
  scope: "server" | "cluster" | "group";
  scope_id: number;
  enabled: boolean;
}

export const listChannelOverrides = (db: Queryable) => db.query<ChannelOverride>("SELECT * FROM channel_overrides");

export async function setChannelOverride(db: Queryable, o: ChannelOverride): Promise<void> {
  await db.query(
    "INSERT INTO channel_overrides (channel_id, scope, scope_id, enabled) VALUES ($1, $2, $3, $4) ON CONFLICT (channel_id, scope, scope_id) DO UPDATE SET enabled = $4",
    [o.channel_id, o.scope, o.scope_id, o.enabled],
  );
}

export async function deleteChannelOverride(db: Queryable, channelId: number, scope: ChannelOverride["scope"], scopeId: number): Promise<void> {
  await db.query("DELETE FROM channel_overrides WHERE channel_id = $1 AND scope = $2 AND scope_id = $3", [channelId, scope, scopeId]);
}
