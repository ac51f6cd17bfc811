import type { Migration } from "./types.ts";

/**
 * A webhook's endpoint URL may carry a token (`?token=`, `user:pass@`): it is now stored sealed in
 * `endpoint_url_secret`, and `endpoint_url` keeps only the masked form people see. Rows written before keep
 * their plain URL until it is next changed (openChannel falls back to it; answers mask it). Webhooks no longer
 * send with GET: a GET test turned any intranet page into something a channel manager could read.
 */
export const migration: Migration = {
  version: 35,
  name: "channel_destinations",
  statements: [
    "ALTER TABLE notification_channels ADD COLUMN endpoint_url_secret text",
    "UPDATE notification_channels SET http_method = 'POST' WHERE http_method = 'GET'",
    "ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_http_method_check",
    "ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_http_method_check CHECK (http_method IN ('POST', 'PUT', 'PATCH'))",
  ],
};
