import { ADMIN_PERMISSIONS, MCP_PRIVILEGES } from "../../vocabulary/permissions.ts";
import { quoteLiteral } from "../../probes/ddl.ts";
import type { Migration } from "./types.ts";

const permissionCheck = [...ADMIN_PERMISSIONS, "*"].map(quoteLiteral).join(", ");

/** Users, groups, sessions, API tokens, grants and token scopes; login throttling shared by all instances. */
export const migration: Migration = {
  version: 4,
  name: "auth",
  statements: [
    `CREATE TABLE users (
      id serial PRIMARY KEY,
      username text NOT NULL,
      password_hash text,
      display_name text NOT NULL DEFAULT '',
      email text NOT NULL DEFAULT '',
      annotation text NOT NULL DEFAULT '',
      enabled boolean NOT NULL DEFAULT true,
      is_superuser boolean NOT NULL DEFAULT false,
      is_service_account boolean NOT NULL DEFAULT false,
      failed_attempts integer NOT NULL DEFAULT 0,
      locked boolean NOT NULL DEFAULT false,
      last_login timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE UNIQUE INDEX users_username_key ON users (lower(username))`,
    `CREATE TABLE sessions (
      token_hash text PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`,
    `CREATE INDEX sessions_user ON sessions (user_id)`,
    `CREATE TABLE api_tokens (
      id serial PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      note text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      last_used_at timestamptz
    )`,
    `CREATE TABLE user_groups (
      id serial PRIMARY KEY,
      name text NOT NULL UNIQUE,
      description text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE group_members (
      group_id integer NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
      member_user_id integer REFERENCES users (id) ON DELETE CASCADE,
      member_group_id integer REFERENCES user_groups (id) ON DELETE CASCADE,
      CHECK ((member_user_id IS NULL) <> (member_group_id IS NULL)),
      CHECK (member_group_id IS DISTINCT FROM group_id)
    )`,
    `CREATE UNIQUE INDEX group_members_key ON group_members (group_id, coalesce(member_user_id, 0), coalesce(member_group_id, 0))`,
    `CREATE TABLE mcp_privileges (
      id serial PRIMARY KEY,
      identifier text NOT NULL UNIQUE,
      item_type text NOT NULL CHECK (item_type IN ('tool', 'resource', 'prompt')),
      description text NOT NULL DEFAULT '',
      is_public boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    ...MCP_PRIVILEGES.map(
      (p) =>
        `INSERT INTO mcp_privileges (identifier, item_type, description) VALUES (${quoteLiteral(p.identifier)}, '${p.item_type}', ${quoteLiteral(p.description)})`,
    ),
    `CREATE TABLE group_mcp_privileges (
      group_id integer NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
      identifier text NOT NULL,
      PRIMARY KEY (group_id, identifier)
    )`,
    `CREATE TABLE group_connection_privileges (
      group_id integer NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
      connection_id integer NOT NULL CHECK (connection_id >= 0),
      access_level text NOT NULL CHECK (access_level IN ('read', 'read_write')),
      PRIMARY KEY (group_id, connection_id)
    )`,
    `CREATE TABLE group_admin_permissions (
      group_id integer NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
      permission text NOT NULL CHECK (permission IN (${permissionCheck})),
      PRIMARY KEY (group_id, permission)
    )`,
    `CREATE TABLE token_connection_scope (
      token_id integer NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      connection_id integer NOT NULL CHECK (connection_id >= 0),
      access_level text NOT NULL CHECK (access_level IN ('read', 'read_write')),
      PRIMARY KEY (token_id, connection_id)
    )`,
    `CREATE TABLE token_mcp_scope (
      token_id integer NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      identifier text NOT NULL,
      PRIMARY KEY (token_id, identifier)
    )`,
    `CREATE TABLE token_admin_scope (
      token_id integer NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      permission text NOT NULL CHECK (permission IN (${permissionCheck})),
      PRIMARY KEY (token_id, permission)
    )`,
    `CREATE TABLE login_throttle (
      key text PRIMARY KEY,
      failures integer NOT NULL,
      window_started timestamptz NOT NULL
    )`,
    `ALTER TABLE connections ADD COLUMN owner_user_id integer REFERENCES users (id) ON DELETE SET NULL`,
  ],
};
