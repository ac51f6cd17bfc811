/**
 * The notification channels API's contract: request and response schemas and the routes with their access (notification-channels.ts answers them).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { CHANNEL_TYPES } from "../datastore/notification-channels.ts";
import { admin, guarded } from "../http/access.ts";
import { IdParam, PathId, json, jsonBody, noContent } from "../http/params.ts";
import { errorResponses } from "../http/schemas.ts";

const tags = ["Notification channels"];
const MANAGE = admin("manage_notification_channels");
const base = "/api/v1/notification-channels";

const EMAIL = z
  .string()
  .trim()
  .max(320)
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, "must be a valid email address (name@domain)");
const METHODS = ["POST", "PUT", "PATCH"] as const;
const AUTH_TYPES = ["basic", "bearer", "api_key"] as const;

const Recipient = z
  .object({
    id: z.number().int(),
    channel_id: z.number().int(),
    email_address: z.string(),
    display_name: z.string(),
    enabled: z.boolean(),
    created_at: z.string(),
  })
  .openapi("EmailRecipient");

const Channel = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    channel_type: z.enum(CHANNEL_TYPES),
    enabled: z.boolean(),
    is_estate_default: z.boolean(),
    webhook_url_set: z.boolean(),
    endpoint_url: z.string().nullable().openapi({ description: "Where a webhook sends, its user info and query values masked (stored encrypted)" }),
    http_method: z.enum(METHODS),
    header_names: z.array(z.string()).openapi({ description: "Names of the custom headers; their values are never returned" }),
    auth_type: z.enum(AUTH_TYPES).nullable(),
    auth_credentials_set: z.boolean(),
    smtp_host: z.string().nullable(),
    smtp_port: z.number().int(),
    smtp_username_set: z.boolean(),
    smtp_password_set: z.boolean(),
    smtp_use_tls: z.boolean(),
    from_address: z.string().nullable(),
    from_name: z.string().nullable(),
    template_alert_fire: z.string().nullable(),
    template_alert_clear: z.string().nullable(),
    template_reminder: z.string().nullable(),
    reminder_enabled: z.boolean(),
    reminder_interval_hours: z.number().int(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    recipients: z.array(Recipient).optional(),
  })
  .openapi("NotificationChannel");

const secretText = (what: string) =>
  z
    .string()
    .max(4000)
    .openapi({ description: `${what}; stored encrypted, never returned; "" clears it on update` });
const template = (kind: string) =>
  z
    .string()
    .max(20_000)
    .nullable()
    .openapi({ description: `Mustache template for ${kind} (variables: AlertTitle, Severity, ServerName, MetricValue, ...); null: the default` });
export const ChannelBody = z
  .object({
    channel_type: z.enum(CHANNEL_TYPES),
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000),
    enabled: z.boolean(),
    is_estate_default: z.boolean().openapi({ description: "Fires for every server unless an override says otherwise" }),
    webhook_url: secretText("Slack/Mattermost incoming-webhook URL"),
    endpoint_url: z.string().max(2000).nullable().openapi({ description: "Webhook channels: where to send; stored encrypted, returned masked" }),
    http_method: z.enum(METHODS),
    headers: z.record(z.string().min(1).max(200), z.string().max(4000)).openapi({ description: "Webhook channels: extra headers; values stored encrypted" }),
    auth_type: z.enum(AUTH_TYPES).nullable(),
    auth_credentials: secretText("basic: user:password; bearer: the token; api_key: Header-Name:value"),
    smtp_host: z.string().max(255).nullable(),
    smtp_port: z.number().int().min(1).max(65535),
    smtp_username: secretText("SMTP login"),
    smtp_password: secretText("SMTP password"),
    smtp_use_tls: z.boolean().openapi({ description: "TLS on port 465, else STARTTLS required" }),
    from_address: EMAIL.nullable(),
    from_name: z.string().max(200).nullable(),
    template_alert_fire: template("alert_fire"),
    template_alert_clear: template("alert_clear"),
    template_reminder: template("reminder"),
    reminder_enabled: z.boolean(),
    reminder_interval_hours: z.number().int().min(1).max(720),
  })
  .partial()
  .strict();
const NewChannel = ChannelBody.required({ channel_type: true, name: true }).openapi("NewNotificationChannel");
export const ChannelChanges = ChannelBody.omit({ channel_type: true }).openapi("NotificationChannelChanges");
const RecipientBody = z
  .object({ email_address: EMAIL, display_name: z.string().max(200).default(""), enabled: z.boolean().default(true) })
  .strict()
  .openapi("EmailRecipientFields");
const RecipientParams = z.object({ id: PathId, rid: PathId });

const History = z
  .object({
    id: z.number().int(),
    alert_id: z.number().int(),
    kind: z.enum(["alert_fire", "alert_clear", "reminder"]),
    status: z.enum(["pending", "sending", "retrying", "sent", "failed", "suppressed", "expired"]),
    attempts: z.number().int(),
    next_attempt_at: z.string(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .openapi("NotificationAttempt");

export const r = {
  list: guarded(
    MANAGE,
    createRoute({
      method: "get",
      path: base,
      tags,
      summary: "Notification channels (never their secrets)",
      responses: { 200: json(z.array(Channel), "Channels"), ...errorResponses(401, 403) },
    }),
  ),
  create: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: base,
      tags,
      summary: "Create a channel",
      request: { body: jsonBody(NewChannel) },
      responses: { 201: json(Channel, "Created"), ...errorResponses(400, 401, 403) },
    }),
  ),
  get: guarded(
    MANAGE,
    createRoute({
      method: "get",
      path: `${base}/{id}`,
      tags,
      summary: "One channel",
      request: { params: IdParam },
      responses: { 200: json(Channel, "Channel"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  update: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: `${base}/{id}`,
      tags,
      summary: 'Change a channel: fields given replace, others stay; a secret given as "" is cleared',
      request: { params: IdParam, body: jsonBody(ChannelChanges) },
      responses: { 200: json(Channel, "Updated"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  remove: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: `${base}/{id}`,
      tags,
      summary: "Delete a channel",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  recipients: guarded(
    MANAGE,
    createRoute({
      method: "get",
      path: `${base}/{id}/recipients`,
      tags,
      summary: "Recipients of an email channel",
      request: { params: IdParam },
      responses: { 200: json(z.array(Recipient), "Recipients"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  addRecipient: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: `${base}/{id}/recipients`,
      tags,
      summary: "Add a recipient",
      request: { params: IdParam, body: jsonBody(RecipientBody) },
      responses: { 201: json(Recipient, "Added"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  putRecipient: guarded(
    MANAGE,
    createRoute({
      method: "put",
      path: `${base}/{id}/recipients/{rid}`,
      tags,
      summary: "Change a recipient",
      request: { params: RecipientParams, body: jsonBody(RecipientBody) },
      responses: { 200: json(Recipient, "Changed"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  deleteRecipient: guarded(
    MANAGE,
    createRoute({
      method: "delete",
      path: `${base}/{id}/recipients/{rid}`,
      tags,
      summary: "Remove a recipient",
      request: { params: RecipientParams },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  test: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: `${base}/{id}/test`,
      tags,
      summary: "Send a test message now",
      request: {
        params: IdParam,
        body: { required: false, content: { "application/json": { schema: z.object({ recipient_email: EMAIL.optional() }).strict() } } },
      },
      responses: {
        200: json(z.object({ status: z.literal("sent") }), "Delivered"),
        502: json(z.object({ error: z.string() }), "The receiving side refused or could not be reached (secrets redacted)"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
  ),
  redeliver: guarded(
    MANAGE,
    createRoute({
      method: "post",
      path: `${base}/{id}/redeliver`,
      tags,
      summary: "Send a channel's failed and expired notices again, oldest first (their age counts from now)",
      request: { params: IdParam },
      responses: {
        200: json(z.object({ requeued: z.number().int() }), "How many notices were handed back to the queue"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
  ),
  history: guarded(
    MANAGE,
    createRoute({
      method: "get",
      path: `${base}/{id}/history`,
      tags,
      summary: "Delivery attempts of a channel, newest first",
      request: { params: IdParam, query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }) },
      responses: { 200: json(z.array(History), "Attempts"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};
