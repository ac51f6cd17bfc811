import type { Migration } from "./types.ts";

/**
 * Security review: a token scope is an allow-list once set (`scoped`), tokens record who minted them,
 * connections can pin a CA bundle and must opt in to cleartext password authentication without TLS, and live
 * sessions on monitored servers are counted.
 */
export const migration: Migration = {
  version: 7,
  name: "security",
  statements: [
    `ALTER TABLE api_tokens ADD COLUMN scoped boolean NOT NULL DEFAULT false`,
    `UPDATE api_tokens t SET scoped = true
      WHERE EXISTS (SELECT 1 FROM token_connection_scope s WHERE s.token_id = t.id)
         OR EXISTS (SELECT 1 FROM token_mcp_scope s WHERE s.token_id = t.id)
         OR EXISTS (SELECT 1 FROM token_admin_scope s WHERE s.token_id = t.id)`,
    `ALTER TABLE api_tokens ADD COLUMN created_by integer REFERENCES users (id) ON DELETE SET NULL`,
    `ALTER TABLE connections ADD COLUMN ssl_root_cert text`,
    `ALTER TABLE connections ADD COLUMN allow_cleartext_password boolean NOT NULL DEFAULT false`,
    // Live sessions on monitored servers, claimed per slot so every instance respects the same limits.
    `CREATE TABLE live_sessions (
      connection_id integer NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      slot integer NOT NULL,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (connection_id, slot)
    )`,
    `CREATE INDEX live_sessions_user ON live_sessions (user_id)`,
  ],
};
