/** API tokens and their scopes. */
import type { Queryable } from "../../drivers/types.ts";
import type { AccessLevel } from "../auth/permissions.ts";
import { NotFoundError } from "../errors.ts";

export interface ApiTokenRow {
  id: number;
  user_id: number;
  username: string;
  is_superuser: boolean;
  is_service_account: boolean;
  note: string;
  created_at: Date;
  expires_at: Date | null;
  token_prefix: string;
}

export async function createApiToken(db: Queryable, t: { tokenHash: string; userId: number; note: string; expiresAt: Date | null }): Promise<number> {
  const [row] = await db.query<{ id: number }>("INSERT INTO api_tokens (token_hash, user_id, note, expires_at) VALUES ($1, $2, $3, $4) RETURNING id", [
    t.tokenHash,
    t.userId,
    t.note,
    t.expiresAt?.toISOString() ?? null,
  ]);
  return row.id;
}

const SELECT_TOKENS = `SELECT t.id, t.user_id, u.username, u.is_superuser, u.is_service_account, t.note, t.created_at, t.expires_at,
                              left(t.token_hash, 12) AS token_prefix
                         FROM api_tokens t JOIN users u ON u.id = t.user_id`;

export const listApiTokens = (db: Queryable) => db.query<ApiTokenRow>(`${SELECT_TOKENS} ORDER BY t.id DESC`);

export async function getApiToken(db: Queryable, id: number): Promise<ApiTokenRow> {
  const [row] = await db.query<ApiTokenRow>(`${SELECT_TOKENS} WHERE t.id = $1`, [id]);
  if (!row) throw new NotFoundError(`token ${id} not found`);
  return row;
}

export async function deleteApiToken(db: Queryable, id: number): Promise<void> {
  if ((await db.query("DELETE FROM api_tokens WHERE id = $1 RETURNING id", [id])).length === 0) throw new NotFoundError(`token ${id} not found`);
}

export interface TokenScope {
  /** Absent: that dimension is not restricted. */
  connections?: Array<{ connection_id: number; access_level: AccessLevel }>;
  mcp_privileges?: string[];
  admin_permissions?: string[];
}

export async function getTokenScope(db: Queryable, tokenId: number): Promise<TokenScope> {
  const [connections, mcp, admin] = await Promise.all([
    db.query<{ connection_id: number; access_level: AccessLevel }>("SELECT connection_id, access_level FROM token_connection_scope WHERE token_id = $1 ORDER BY connection_id", [tokenId]),
    db.query<{ identifier: string }>("SELECT identifier FROM token_mcp_scope WHERE token_id = $1 ORDER BY identifier", [tokenId]),
    db.query<{ permission: string }>("SELECT permission FROM token_admin_scope WHERE token_id = $1 ORDER BY permission", [tokenId]),
  ]);
  const scope: TokenScope = {};
  if (connections.length) scope.connections = connections;
  if (mcp.length) scope.mcp_privileges = mcp.map((m) => m.identifier);
  if (admin.length) scope.admin_permissions = admin.map((a) => a.permission);
  return scope;
}

/** Replaces each dimension present in `scope` (an empty list lifts that restriction). */
export async function setTokenScope(db: Queryable, tokenId: number, scope: TokenScope): Promise<void> {
  if (scope.connections) {
    await db.query("DELETE FROM token_connection_scope WHERE token_id = $1", [tokenId]);
    for (const c of scope.connections) await db.query("INSERT INTO token_connection_scope VALUES ($1, $2, $3)", [tokenId, c.connection_id, c.access_level]);
  }
  if (scope.mcp_privileges) {
    await db.query("DELETE FROM token_mcp_scope WHERE token_id = $1", [tokenId]);
    for (const m of new Set(scope.mcp_privileges)) await db.query("INSERT INTO token_mcp_scope VALUES ($1, $2)", [tokenId, m]);
  }
  if (scope.admin_permissions) {
    await db.query("DELETE FROM token_admin_scope WHERE token_id = $1", [tokenId]);
    for (const p of new Set(scope.admin_permissions)) await db.query("INSERT INTO token_admin_scope VALUES ($1, $2)", [tokenId, p]);
  }
}

export async function clearTokenScope(db: Queryable, tokenId: number): Promise<void> {
  await setTokenScope(db, tokenId, { connections: [], mcp_privileges: [], admin_permissions: [] });
}
