/**
 * RBAC decisions. A user's rights come from the groups it belongs to (groups nest: members of a group get the
 * grants of every group it belongs to); a superuser has every right. An API token may carry a scope: its
 * rights are then the intersection of the owner's rights and the scope's allow-lists (connections, MCP items,
 * admin permissions), for superusers too, and a scoped token never acts as a superuser.
 */
import type { Queryable } from "../../drivers/types.ts";
import { type TokenScope, getTokenScope, isScoped } from "../datastore/api-tokens.ts";
import { type Grants, userGroupsAndGrants } from "../datastore/groups.ts";
import { type AccessLevel, ALL } from "../vocabulary/permissions.ts";

/** Who is calling, and with which credential. */
export interface Principal {
  userId: number;
  username: string;
  isSuperuser: boolean;
  via: "session" | "api_token";
  /** Set for API tokens: scopes hang off it. */
  tokenId?: number;
  tokenHash: string;
}

export interface Authority {
  principal: Principal;
  groups: string[];
  grants: Grants;
  scope: TokenScope;
}

export async function loadAuthority(db: Queryable, principal: Principal): Promise<Authority> {
  const [{ groups, grants }, scope] = await Promise.all([
    userGroupsAndGrants(db, principal.userId),
    principal.tokenId ? getTokenScope(db, principal.tokenId) : Promise.resolve({}),
  ]);
  return { principal, groups, grants, scope };
}

/** Superuser powers need a superuser's session or unscoped token. */
export const actsAsSuperuser = (a: Authority) => a.principal.isSuperuser && !isScoped(a.scope);

const allows = (list: readonly string[] | undefined, item: string) => list === undefined || list.includes(ALL) || list.includes(item);

export function hasAdminPermission(a: Authority, permission: string): boolean {
  const owned = a.principal.isSuperuser || a.grants.admin_permissions.includes(ALL) || a.grants.admin_permissions.includes(permission);
  return owned && allows(a.scope.admin_permissions, permission);
}

export function mayUseTool(a: Authority, tool: string, isPublic = false): boolean {
  const owned = a.principal.isSuperuser || isPublic || a.grants.mcp_privileges.includes(ALL) || a.grants.mcp_privileges.includes(tool);
  return owned && allows(a.scope.mcp_privileges, tool);
}

export interface ConnectionOwnership {
  id: number;
  owner_user_id: number | null;
  is_shared: boolean;
}

export const RANK: Record<AccessLevel, number> = { read: 1, read_write: 2 };
const higher = (a: AccessLevel | null, b: AccessLevel | null) => (a === null ? b : b === null ? a : RANK[a] >= RANK[b] ? a : b);
const lower = (a: AccessLevel | null, b: AccessLevel | null) => (a === null || b === null ? null : RANK[a] <= RANK[b] ? a : b);

/** Whether the caller holds `level` on every connection, present and future (a grant on connection 0). */
export function holdsAllConnections(a: Authority, level: AccessLevel): boolean {
  const atLeast = (g: { connection_id: number; access_level: AccessLevel }) => g.connection_id === 0 && RANK[g.access_level] >= RANK[level];
  const owned = a.principal.isSuperuser || a.grants.connection_privileges.some(atLeast);
  return owned && (a.scope.connections === undefined || a.scope.connections.some(atLeast));
}

/**
 * What the caller may do on a connection: superusers, owners and holders of manage_connections read_write;
 * a group grant on the connection (or on 0, all connections) its level; a shared connection read; a token's
 * connection scope caps the result.
 */
export function connectionAccess(a: Authority, c: ConnectionOwnership): AccessLevel | null {
  let level: AccessLevel | null = null;
  const manager = a.principal.isSuperuser || a.grants.admin_permissions.includes(ALL) || a.grants.admin_permissions.includes("manage_connections");
  if (manager || c.owner_user_id === a.principal.userId) level = "read_write";
  for (const g of a.grants.connection_privileges) if (g.connection_id === c.id || g.connection_id === 0) level = higher(level, g.access_level);
  if (c.is_shared) level = higher(level, "read");
  const scoped = a.scope.connections;
  if (!scoped) return level;
  const ceiling = scoped.filter((s) => s.connection_id === c.id || s.connection_id === 0).reduce<AccessLevel | null>((m, s) => higher(m, s.access_level), null);
  return lower(level, ceiling);
}

/** Effective rights of a user (for the privileges endpoints): superusers hold everything. */
export function effectiveGrants(a: Authority): Grants {
  if (a.principal.isSuperuser)
    return { mcp_privileges: [ALL], connection_privileges: [{ connection_id: 0, access_level: "read_write" }], admin_permissions: [ALL] };
  return a.grants;
}
