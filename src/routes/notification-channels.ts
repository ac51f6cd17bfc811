import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { seal } from "../auth/secret-box.ts";
import {
  type ChannelFields,
  type ChannelType,
  type ChannelRow,
  type RecipientRow,
  addRecipient,
  createChannel,
  deleteChannel,
  deleteRecipient,
  getChannel,
  listChannels,
  listRecipients,
  recipientsOf,
  updateChannel,
  updateRecipient,
} from "../datastore/notification-channels.ts";
import { InputError } from "../errors.ts";
import { actsAsSuperuser } from "../auth/rbac.ts";
import { authority } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { ApiError } from "../http/errors.ts";
import { newRouter } from "../http/router.ts";
import { openChannel, redact } from "../notify/open-channel.ts";
import { maskedUrl } from "../notify/masked-url.ts";
import { checkOutboundHost, checkOutboundUrl } from "../notify/outbound-guard.ts";
import { testMessage } from "../notify/payloads.ts";
import { channelHistory, redeliver } from "../notify/queue.ts";
import { checkTemplate } from "../notify/templates.ts";
import { send, withDeliveryId } from "../notify/transports.ts";
import { type ChannelBody, type ChannelChanges, r } from "./notification-channels-contract.ts";

const iso = (d: Date | null) => d?.toISOString() ?? null;
const recipientJson = (x: RecipientRow) => ({ ...x, created_at: x.created_at.toISOString() });

/** Channels as answered, each email channel with its recipients (read in one statement for all). */
async function channelsJson(c: Context<AppEnv>, rows: readonly ChannelRow[]) {
  const recipients = await recipientsOf(
    c.get("db"),
    rows.filter((row) => row.channel_type === "email").map((row) => row.id),
  );
  return rows.map((row) => channelJson(row, recipients.get(row.id) ?? []));
}

const oneChannelJson = async (c: Context<AppEnv>, row: ChannelRow) => (await channelsJson(c, [row]))[0];

function channelJson(row: ChannelRow, recipients: RecipientRow[]) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    channel_type: row.channel_type,
    enabled: row.enabled,
    is_estate_default: row.is_estate_default,
    webhook_url_set: row.webhook_url_secret !== null,
    endpoint_url: row.endpoint_url === null ? null : maskedUrl(row.endpoint_url),
    http_method: row.http_method,
    header_names: [...row.header_names].sort(),
    auth_type: row.auth_type,
    auth_credentials_set: row.auth_credentials_secret !== null,
    smtp_host: row.smtp_host,
    smtp_port: row.smtp_port,
    smtp_username_set: row.smtp_username_secret !== null,
    smtp_password_set: row.smtp_password_secret !== null,
    smtp_use_tls: row.smtp_use_tls,
    from_address: row.from_address,
    from_name: row.from_name,
    template_alert_fire: row.template_alert_fire,
    template_alert_clear: row.template_alert_clear,
    template_reminder: row.template_reminder,
    reminder_enabled: row.reminder_enabled,
    reminder_interval_hours: row.reminder_interval_hours,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(row.channel_type === "email" ? { recipients: recipients.map(recipientJson) } : {}),
  };
}

const EMPTY: ChannelFields = {
  name: "",
  description: "",
  channel_type: "webhook",
  enabled: true,
  is_estate_default: false,
  webhook_url_secret: null,
  endpoint_url: null,
  http_method: "POST",
  endpoint_url_secret: null,
  headers_secret: null,
  header_names: [],
  auth_type: null,
  auth_credentials_secret: null,
  smtp_host: null,
  smtp_port: 587,
  smtp_username_secret: null,
  smtp_password_secret: null,
  smtp_use_tls: true,
  from_address: null,
  from_name: null,
  template_alert_fire: null,
  template_alert_clear: null,
  template_reminder: null,
  reminder_enabled: false,
  reminder_interval_hours: 4,
};

/**
 * The stored fields after applying `body` to `current`: plain fields replace when given; a secret given
 * replaces, `""` clears, absent keeps. Then the whole is checked for its type, before anything is written.
 */
async function merged(c: Context<AppEnv>, current: ChannelFields, body: z.infer<typeof ChannelBody>): Promise<ChannelFields> {
  const secret = c.get("config").secret;
  const sealed = async (value: string | undefined, kept: string | null) => (value === undefined ? kept : value === "" ? null : seal(value, secret));
  const { webhook_url, endpoint_url, headers, auth_credentials, smtp_username, smtp_password, ...plain } = body;
  const next: ChannelFields = { ...current, ...Object.fromEntries(Object.entries(plain).filter(([, v]) => v !== undefined)) };
  next.webhook_url_secret = await sealed(webhook_url, current.webhook_url_secret);
  if (endpoint_url !== undefined) {
    next.endpoint_url = endpoint_url && maskedUrl(endpoint_url);
    next.endpoint_url_secret = await sealed(endpoint_url ?? "", null);
  }
  next.auth_credentials_secret = await sealed(auth_credentials, current.auth_credentials_secret);
  next.smtp_username_secret = await sealed(smtp_username, current.smtp_username_secret);
  next.smtp_password_secret = await sealed(smtp_password, current.smtp_password_secret);
  if (headers !== undefined) {
    next.header_names = Object.keys(headers);
    next.headers_secret = next.header_names.length ? await seal(JSON.stringify(headers), secret) : null;
  }
  const deny = c.get("config").notifications.deny_private_networks;
  for (const kind of ["template_alert_fire", "template_alert_clear", "template_reminder"] as const) checkTemplate(next[kind], kind);
  if (webhook_url) await checkOutboundUrl(webhook_url, "webhook_url", deny);
  if (next.channel_type === "slack" || next.channel_type === "mattermost") {
    if (!next.webhook_url_secret) throw new InputError(`webhook_url is required for ${next.channel_type} channels`);
  } else if (next.channel_type === "webhook") {
    if (!next.endpoint_url) throw new InputError("endpoint_url is required for webhook channels");
    if (endpoint_url) await checkOutboundUrl(endpoint_url, "endpoint_url", deny);
    if (next.auth_type && !next.auth_credentials_secret) throw new InputError(`auth_credentials is required with auth_type ${next.auth_type}`);
    if (auth_credentials && next.auth_type === "basic" && !auth_credentials.includes(":"))
      throw new InputError("auth_credentials: basic auth takes user:password");
    if (auth_credentials && next.auth_type === "api_key" && !/^[^:\s]+:.+/.test(auth_credentials))
      throw new InputError("auth_credentials: api_key takes Header-Name:value");
  } else {
    if (!next.smtp_host) throw new InputError("smtp_host is required for email channels");
    if (!next.from_address) throw new InputError("from_address is required for email channels");
    await checkOutboundHost(next.smtp_host, "smtp_host", deny);
  }
  return next;
}

/** What decides where each type of channel sends. */
const DESTINATION: Record<ChannelType, ReadonlyArray<"endpoint_url" | "http_method" | "webhook_url" | "smtp_host" | "smtp_port" | "smtp_use_tls">> = {
  webhook: ["endpoint_url", "http_method"],
  slack: ["webhook_url"],
  mattermost: ["webhook_url"],
  email: ["smtp_host", "smtp_port", "smtp_use_tls"],
};
const STORED_SECRETS = [
  ["auth_credentials", "auth_credentials_secret"],
  ["headers", "headers_secret"],
  ["smtp_username", "smtp_username_secret"],
  ["smtp_password", "smtp_password_secret"],
] as const;

/**
 * A channel's stored secrets must not follow it to a destination its creator did not choose (the rule
 * connections follow): whoever re-points it gives every stored secret again, unless they created it or are a
 * superuser.
 */
async function assertSecretsFollowCreator(c: Context<AppEnv>, row: ChannelRow, body: z.infer<typeof ChannelChanges>) {
  const a = await authority(c);
  if (row.created_by === a.principal.username || actsAsSuperuser(a)) return;
  const { channel } = await openChannel(row, c.get("config").secret);
  const current = {
    endpoint_url: channel.endpoint_url,
    http_method: row.http_method,
    webhook_url: channel.webhook_url,
    smtp_host: row.smtp_host,
    smtp_port: row.smtp_port,
    smtp_use_tls: row.smtp_use_tls,
  };
  const moved = DESTINATION[row.channel_type].filter((k) => body[k] !== undefined && body[k] !== current[k]);
  const missing = STORED_SECRETS.filter(([field, column]) => row[column] !== null && body[field] === undefined).map(([field]) => `\`${field}\``);
  if (!moved.length || !missing.length) return;
  throw new ApiError(
    400,
    `changing ${moved.join(", ")} sends the channel's stored secrets somewhere new: give ${missing.join(", ")} in the same request (only the channel's creator or a superuser may keep the stored ones)`,
  );
}

const fieldsOf = (row: ChannelRow): ChannelFields => {
  const { id: _id, created_by: _by, created_at: _at, updated_at: _up, ...fields } = row;
  return fields;
};

export const notificationChannelRoutes = newRouter()
  .openapi(r.list, async (c) => c.json(await channelsJson(c, await listChannels(c.get("db"))), 200))
  .openapi(r.create, async (c) => {
    const fields = await merged(c, EMPTY, c.req.valid("json"));
    const row = await createChannel(c.get("db"), { ...fields, created_by: (await authority(c)).principal.username });
    return c.json(await oneChannelJson(c, row), 201);
  })
  .openapi(r.get, async (c) => c.json(await oneChannelJson(c, await getChannel(c.get("db"), c.req.valid("param").id)), 200))
  .openapi(r.update, async (c) => {
    const { id } = c.req.valid("param");
    const current = await getChannel(c.get("db"), id);
    await assertSecretsFollowCreator(c, current, c.req.valid("json"));
    const row = await updateChannel(c.get("db"), id, await merged(c, fieldsOf(current), c.req.valid("json")));
    return c.json(await oneChannelJson(c, row), 200);
  })
  .openapi(r.remove, async (c) => {
    await deleteChannel(c.get("db"), c.req.valid("param").id);
    return c.body(null, 204);
  })
  .openapi(r.recipients, async (c) => {
    const { id } = c.req.valid("param");
    await getChannel(c.get("db"), id);
    return c.json((await listRecipients(c.get("db"), id)).map(recipientJson), 200);
  })
  .openapi(r.addRecipient, async (c) => {
    const { id } = c.req.valid("param");
    const channel = await getChannel(c.get("db"), id);
    if (channel.channel_type !== "email") throw new InputError(`channel ${id} is a ${channel.channel_type} channel: only email channels have recipients`);
    return c.json(recipientJson(await addRecipient(c.get("db"), id, c.req.valid("json"))), 201);
  })
  .openapi(r.putRecipient, async (c) => {
    const { id, rid } = c.req.valid("param");
    return c.json(recipientJson(await updateRecipient(c.get("db"), id, rid, c.req.valid("json"))), 200);
  })
  .openapi(r.deleteRecipient, async (c) => {
    const { id, rid } = c.req.valid("param");
    await deleteRecipient(c.get("db"), id, rid);
    return c.body(null, 204);
  })
  .openapi(r.test, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json") ?? {}; // optional: without one, the channel's own recipients
    const row = await getChannel(c.get("db"), id);
    const { channel, secrets } = await openChannel(row, c.get("config").secret);
    const recipients = body.recipient_email
      ? [body.recipient_email]
      : (await listRecipients(c.get("db"), id)).filter((x) => x.enabled).map((x) => x.email_address);
    if (row.channel_type === "email" && recipients.length === 0) throw new InputError("no recipients: add one to the channel, or give recipient_email");
    try {
      await send(
        channel,
        withDeliveryId(testMessage(channel, recipients), `test-${crypto.randomUUID()}`),
        c.get("transports"),
        c.get("config").notifications.deny_private_networks,
      );
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new ApiError(502, `the test message was not delivered: ${redact((err as Error).message, secrets)}`);
    }
    return c.json({ status: "sent" as const }, 200);
  })
  .openapi(r.redeliver, async (c) => {
    const { id } = c.req.valid("param");
    await getChannel(c.get("db"), id);
    return c.json({ requeued: await redeliver(c.get("db"), id) }, 200);
  })
  .openapi(r.history, async (c) => {
    const { id } = c.req.valid("param");
    await getChannel(c.get("db"), id);
    const rows = await channelHistory(c.get("db"), id, c.req.valid("query").limit);
    return c.json(
      rows.map((h) => ({
        id: h.id,
        alert_id: h.alert_id,
        kind: h.kind,
        status: h.status as "sent",
        attempts: h.attempts,
        next_attempt_at: h.next_attempt_at.toISOString(),
        last_error: h.last_error,
        created_at: h.created_at.toISOString(),
        sent_at: iso(h.sent_at),
      })),
      200,
    );
  });
