/** Who is calling: resolved from a bearer token or the session cookie. */
import type { Queryable } from "../../drivers/types.ts";
import type { AccessLevel } from "../vocabulary/permissions.ts";
import type { Authority, Principal } from "./rbac.ts";

export type { Principal } from "./rbac.ts";
import { isSessionToken, tokenHash } from "./tokens.ts";

interface Found {
  id: number;
  username: string;
  is_superuser: boolean;
  token_id: number | null;
  scoped: boolean | null;
  groups: string[];
  mcp_privileges: string[];
  connection_privileges: Array<{ connection_id: number; access_level: AccessLevel }>;
  admin_permissions: string[];
  scope_connections: Array<{ connection_id: number; access_level: AccessLevel }>;
  scope_mcp: string[];
  scope_admin: string[];
}

const SESSION_CALLER = `SELECT u.id, u.username, u.is_superuser, NULL::int AS token_id, NULL::boolean AS scoped FROM sessions s JOIN users u ON u.id = s.user_id
  WHERE s.token_hash = $1 AND s.expires_at > now() AND u.enabled AND NOT u.locked`;
const TOKEN_CALLER = `SELECT u.id, u.username, u.is_superuser, t.id AS token_id, t.scoped,
       (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute') AS stale_use FROM api_tokens t JOIN users u ON u.id = t.user_id
  WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > now()) AND u.enabled AND NOT u.locked`;
const list = (select: string) => `coalesce((${select}), '[]'::json)`;

/**
 * The caller of a token with everything RBAC decides on (groups through nesting, their grants, the token's
 * scope) in one statement, so authenticating costs one round trip. An API token's last use is recorded at
 * most once a minute, by the same statement. Null when the token is unknown, expired, or its user is disabled or locked.
 * `hash`: the token's hash, when the caller has computed it already.
 */
export async function resolveCaller(db: Queryable, token: string, hash?: string): Promise<Authority | null> {
  hash ??= tokenHash(token);
  const session = isSessionToken(token);
  const [row] = await db.query<Found>(
    `WITH RECURSIVE caller AS (${session ? SESSION_CALLER : TOKEN_CALLER}),
     up(id) AS (SELECT group_id FROM group_members WHERE member_user_id = (SELECT id FROM caller)
                UNION SELECT m.group_id FROM group_members m JOIN up ON m.member_group_id = up.id)
     ${session ? "" : ", touched AS (UPDATE api_tokens SET last_used_at = now() WHERE id = (SELECT token_id FROM caller WHERE stale_use) RETURNING id)"}
     SELECT c.id, c.username, c.is_superuser, c.token_id, c.scoped,
            ${list("SELECT json_agg(g.name ORDER BY g.name) FROM user_groups g WHERE g.id IN (SELECT id FROM up)")} AS groups,
            ${list("SELECT json_agg(DISTINCT identifier ORDER BY identifier) FROM group_mcp_privileges WHERE group_id IN (SELECT id FROM up)")} AS mcp_privileges,
            ${list(`SELECT json_agg(json_build_object('connection_id', connection_id, 'access_level', access_level) ORDER BY connection_id)
                      FROM (SELECT connection_id, max(access_level) AS access_level FROM group_connection_privileges WHERE group_id IN (SELECT id FROM up) GROUP BY 1) g`)} AS connection_privileges,
            ${list("SELECT json_agg(DISTINCT permission ORDER BY permission) FROM group_admin_permissions WHERE group_id IN (SELECT id FROM up)")} AS admin_permissions,
            ${list(`SELECT json_agg(json_build_object('connection_id', connection_id, 'access_level', access_level) ORDER BY connection_id)
                      FROM token_connection_scope WHERE token_id = c.token_id`)} AS scope_connections,
            ${list("SELECT json_agg(identifier ORDER BY identifier) FROM token_mcp_scope WHERE token_id = c.token_id")} AS scope_mcp,
            ${list("SELECT json_agg(permission ORDER BY permission) FROM token_admin_scope WHERE token_id = c.token_id")} AS scope_admin
       FROM caller c`,
    [hash],
  );
  if (!row) return null;
  const principal: Principal = {
    userId: row.id,
    username: row.username,
    isSuperuser: row.is_superuser,
    via: session ? "session" : "api_token",
    tokenId: row.token_id ?? undefined,
    tokenHash: hash,
  };
  return {
    principal,
    groups: row.groups,
    grants: { mcp_privileges: row.mcp_privileges, connection_privileges: row.connection_privileges, admin_permissions: row.admin_permissions },
    scope: row.scoped ? { connections: row.scope_connections, mcp_privileges: row.scope_mcp, admin_permissions: row.scope_admin } : {},
  };
}
