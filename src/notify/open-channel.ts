/** A stored channel with its sealed secrets opened for sending, and the list of those secrets for redaction. */
import { open } from "../auth/secret-box.ts";
import type { ChannelRow } from "../datastore/notification-channels.ts";
import type { OpenChannel } from "./payloads.ts";

const unseal = async (sealed: string | null, secret: string | undefined) => (sealed ? open(sealed, secret) : null);

export async function openChannel(row: ChannelRow, secret: string | undefined): Promise<{ channel: OpenChannel; secrets: string[] }> {
  const [webhook_url, endpoint_url, headersJson, auth_credentials, username, password] = await Promise.all(
    [row.webhook_url_secret, row.endpoint_url_secret, row.headers_secret, row.auth_credentials_secret, row.smtp_username_secret, row.smtp_password_secret].map(
      (s) => unseal(s, secret),
    ),
  );
  const headers = headersJson ? (JSON.parse(headersJson) as Record<string, string>) : {};
  const channel: OpenChannel = {
    channel_type: row.channel_type,
    name: row.name,
    webhook_url,
    endpoint_url: endpoint_url ?? row.endpoint_url, // a row written before endpoint URLs were sealed
    http_method: row.http_method,
    headers,
    auth_type: row.auth_type,
    auth_credentials,
    smtp: row.smtp_host ? { host: row.smtp_host, port: row.smtp_port, username, password, use_tls: row.smtp_use_tls } : null,
    from_address: row.from_address,
    from_name: row.from_name,
    templates: { alert_fire: row.template_alert_fire, alert_clear: row.template_alert_clear, reminder: row.template_reminder },
  };
  // Every secret and its recognisable parts (a basic-auth password, an api_key value) get redacted from errors.
  const secrets = [webhook_url, endpoint_url, auth_credentials, password, username, ...Object.values(headers), ...(auth_credentials?.split(":") ?? [])].filter(
    (s): s is string => !!s && s.length >= 4,
  );
  if (auth_credentials && row.auth_type === "basic") secrets.push(btoa(auth_credentials));
  return { channel, secrets };
}

/** The message with every secret replaced. */
export function redact(message: string, secrets: readonly string[]): string {
  let out = message;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(s).join("[redacted]");
  return out;
}
