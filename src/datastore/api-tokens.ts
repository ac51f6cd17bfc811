/** API tokens and their scopes. */
import type { Queryable } from "../../drivers/types.ts";
import type { AccessLevel } from "../vocabulary/permissions.ts";
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
  last_used_at: Date | null;
  created_by: string | null;
  token_prefix: string;
}

export async function createApiToken(
  db: Queryable,
  t: { tokenHash: string; userId: number; note: string; expiresAt: Date | null; createdBy?: number },
): Promise<number> {
  const [row] = await db.query<{ id: number }>(
    "INSERT INTO api_tokens (token_hash, user_id, note, expires_at, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    [t.tokenHash, t.userId, t.note, t.expiresAt?.toISOString() ?? null, t.createdBy ?? null],
  );
  return row.id;
}

const SELECT_TOKENS = `SELECT t.id, t.user_id, u.username, u.is_superuser, u.is_service_account, t.note, t.created_at, t.expires_at,
                              t.last_used_at, creator.username AS created_by, left(t.token_hash, 12) AS token_prefix
                         FROM api_tokens t JOIN users u ON u.id = t.user_id LEFT JOIN users creator ON creator.id = t.created_by`;

export const listApiTokens = (db: Queryable) => db.query<ApiTokenRow>(`${SELECT_TOKENS} ORDER BY t.id DESC`);

export async function getApiToken(db: Queryable, id: number): Promise<ApiTokenRow> {
  const [row] = await db.query<ApiTokenRow>(`${SELECT_TOKENS} WHERE t.id = $1`, [id]);
  if (!row) throw new NotFoundError(`token ${id} not found`);
  return row;
}

export async function deleteApiToken(db: Queryable, id: number): Promise<void> {
  if ((await db.query("DELETE FROM api_tokens WHERE id = $1 RETURNING id", [id])).length === 0) throw new NotFoundError(`token ${id} not found`);
}

/**
 * What a scoped token may do, as allow-lists: a token without a scope acts with its owner's rights; once
 * scoped, each dimension lists all it may use (an empty list: nothing of that kind). Unscoped: `{}`.
 */
export interface TokenScope {
  connections?: Array<{ connection_id: number; access_level: AccessLevel }>;
  mcp_privileges?: string[];
  admin_permissions?: string[];
}

export const isScoped = (scope: TokenScope) => scope.connections !== undefined;

export async function getTokenScope(db: Queryable, tokenId: number): Promise<TokenScope> {
  return (await getTokenScopes(db, [tokenId])).get(tokenId) ?? {};
}

/** The scopes of several tokens in four statements however many there are (unscoped tokens: `{}`). */
export async function getTokenScopes(db: Queryable, tokenIds: readonly number[]): Promise<Map<number, TokenScope>> {
  const ids = [tokenIds];
  const [tokens, connections, mcp, admin] = await Promise.all([
    db.query<{ id: number; scoped: boolean }>("SELECT id, scoped FROM api_tokens WHERE id = ANY($1::int[])", ids),
    db.query<{ token_id: number; connection_id: number; access_level: AccessLevel }>(
      "SELECT token_id, connection_id, access_level FROM token_connection_scope WHERE token_id = ANY($1::int[]) ORDER BY token_id, connection_id",
      ids,
    ),
    db.query<{ token_id: number; identifier: string }>(
      "SELECT token_id, identifier FROM token_mcp_scope WHERE token_id = ANY($1::int[]) ORDER BY token_id, identifier",
      ids,
    ),
    db.query<{ token_id: number; permission: string }>(
      "SELECT token_id, permission FROM token_admin_scope WHERE token_id = ANY($1::int[]) ORDER BY token_id, permission",
      ids,
    ),
  ]);
  const scopes = new Map<number, TokenScope>();
  for (const t of tokens) {
    if (!t.scoped) scopes.set(t.id, {});
    else
      scopes.set(t.id, {
        connections: connections.filter((c) => c.token_id === t.id).map(({ connection_id, access_level }) => ({ connection_id, access_level })),
        mcp_privileges: mcp.filter((m) => m.token_id === t.id).map((m) => m.identifier),
        admin_permissions: admin.filter((a) => a.token_id === t.id).map((a) => a.permission),
      });
  }
  return scopes;
}

/** Scopes the token (if it was not) and replaces each dimension present in `scope`; the others keep their lists. */
export async function setTokenScope(db: Queryable, tokenId: number, scope: TokenScope): Promise<void> {
  await db.query("UPDATE api_tokens SET scoped = true WHERE id = $1", [tokenId]);
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

/** Back to the owner's full rights. */
export async function clearTokenScope(db: Queryable, tokenId: number): Promise<void> {
  for (const table of ["token_connection_scope", "token_mcp_scope", "token_admin_scope"]) await db.query(`DELETE FROM ${table} WHERE token_id = $1`, [tokenId]);
  await db.query("UPDATE api_tokens SET scoped = false WHERE id = $1", [tokenId]);
}
