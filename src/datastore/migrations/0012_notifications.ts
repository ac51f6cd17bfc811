import type { Migration } from "./types.ts";

/**
 * Notification channels and their delivery. Secrets (webhook URLs, credentials, header values, SMTP login)
 * are stored sealed. The `notifications` table is both the queue and the history: rows are claimed by one
 * sender at a time, and each (alert, channel, kind, sequence) is queued once however many alerters run.
 */
export const migration: Migration = {
  version: 12,
  name: "notifications",
  statements: [
    `CREATE TABLE notification_channels (
      id serial PRIMARY KEY,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      channel_type text NOT NULL CHECK (channel_type IN ('slack', 'mattermost', 'webhook', 'email')),
      enabled boolean NOT NULL DEFAULT true,
      is_estate_default boolean NOT NULL DEFAULT false,
      webhook_url_secret text,
      endpoint_url text,
      http_method text NOT NULL DEFAULT 'POST' CHECK (http_method IN ('GET', 'POST', 'PUT', 'PATCH')),
      headers_secret text,
      header_names text[] NOT NULL DEFAULT '{}',
      auth_type text CHECK (auth_type IN ('basic', 'bearer', 'api_key')),
      auth_credentials_secret text,
      smtp_host text,
      smtp_port integer NOT NULL DEFAULT 587,
      smtp_username_secret text,
      smtp_password_secret text,
      smtp_use_tls boolean NOT NULL DEFAULT true,
      from_address text,
      from_name text,
      template_alert_fire text,
      template_alert_clear text,
      template_reminder text,
      reminder_enabled boolean NOT NULL DEFAULT false,
      reminder_interval_hours integer NOT NULL DEFAULT 4 CHECK (reminder_interval_hours > 0),
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE email_recipients (
      id serial PRIMARY KEY,
      channel_id integer NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
      email_address text NOT NULL,
      display_name text NOT NULL DEFAULT '',
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE UNIQUE INDEX email_recipients_once ON email_recipients (channel_id, lower(email_address))`,
    `CREATE TABLE channel_overrides (
      channel_id integer NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
      scope text NOT NULL CHECK (scope IN ('server', 'cluster', 'group')),
      scope_id integer NOT NULL,
      enabled boolean NOT NULL,
      PRIMARY KEY (channel_id, scope, scope_id)
    )`,
    `CREATE TABLE notifications (
      id bigserial PRIMARY KEY,
      channel_id integer NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
      alert_id bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('alert_fire', 'alert_clear', 'reminder')),
      sequence integer NOT NULL DEFAULT 0,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'retrying', 'sent', 'failed', 'suppressed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      claimed_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      UNIQUE (alert_id, channel_id, kind, sequence)
    )`,
    `CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status IN ('pending', 'retrying', 'sending')`,
    `CREATE INDEX notifications_channel ON notifications (channel_id, created_at DESC)`,
    // How many times an alert has fired (re-activations included): the sequence of its alert_fire notifications.
    `ALTER TABLE alerts ADD COLUMN fire_count integer NOT NULL DEFAULT 1`,
  ],
};
