/**
 * Nobody hands out a right they do not hold. Every write that can widen someone's rights (group membership
 * and nesting, group grants, token scopes, tokens minted for others, changes to another account) checks that
 * the rights it would confer are covered by the caller's own effective rights, token scope included.
 */
import type { Queryable } from "../../drivers/types.ts";
import { ForbiddenError } from "../errors.ts";
import type { User } from "../datastore/users.ts";
import { type Grants, effectiveGroupGrants } from "../datastore/groups.ts";
import { ACCESS_LEVELS, ADMIN_PERMISSIONS, ALL } from "../vocabulary/permissions.ts";
import {
  type Authority,
  RANK,
  actsAsSuperuser,
  connectionAccess,
  hasAdminPermission,
  holdsAllConnections,
  loadAuthority,
  mayUseTool,
  type ConnectionOwnership,
} from "./rbac.ts";

const NOBODY = { userId: 0, username: "", isSuperuser: false, via: "session" as const, tokenHash: "" };

/** The rights a set of grants confers on someone who has nothing else. */
export const grantsAuthority = (grants: Grants): Authority => ({ principal: NOBODY, groups: [], grants, scope: {} });

/** What a member of the group receives: its grants and those of every group it belongs to. */
export const groupAuthority = async (db: Queryable, groupId: number) => grantsAuthority(await effectiveGroupGrants(db, groupId));

export const userAuthority = (db: Queryable, user: Pick<User, "id" | "username" | "is_superuser">) =>
  loadAuthority(db, { userId: user.id, username: user.username, isSuperuser: user.is_superuser, via: "session", tokenHash: "" });

/** The first right `target` has that `caller` lacks, described for a person; null when the caller covers it all. */
export async function missingRight(db: Queryable, caller: Authority, target: Authority): Promise<string | null> {
  if (actsAsSuperuser(caller)) return null;
  if (actsAsSuperuser(target)) return "superuser status";
  for (const permission of [ALL, ...ADMIN_PERMISSIONS]) {
    if (hasAdminPermission(target, permission) && !hasAdminPermission(caller, permission)) return `the admin permission \`${permission}\``;
  }
  const identifiers = (await db.query<{ identifier: string }>("SELECT identifier FROM mcp_privileges")).map((r) => r.identifier);
  for (const item of [ALL, ...identifiers]) {
    if (mayUseTool(target, item) && !mayUseTool(caller, item)) return `the MCP privilege \`${item}\``;
  }
  for (const level of ACCESS_LEVELS) {
    if (holdsAllConnections(target, level) && !holdsAllConnections(caller, level)) return `${level} on every connection (connection 0)`;
  }
  for (const row of await db.query<ConnectionOwnership>("SELECT id, owner_user_id, is_shared FROM connections ORDER BY id")) {
    const wanted = connectionAccess(target, row);
    const held = connectionAccess(caller, row);
    if (wanted !== null && (held === null || RANK[held] < RANK[wanted])) return `${wanted} on connection ${row.id}`;
  }
  return null;
}

/** 403 naming the first right the action would confer that the caller does not hold. */
export async function assertCovers(db: Queryable, caller: Authority, target: Authority, action: string): Promise<void> {
  const missing = await missingRight(db, caller, target);
  if (missing) throw new ForbiddenError(`refused: ${action} would confer ${missing}, which you do not hold; you can only hand out rights you have`);
}
