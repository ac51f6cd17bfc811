/** Groups (which nest), their members, and the grants they hold. */
import type { Queryable } from "../../drivers/types.ts";
import type { AccessLevel } from "../vocabulary/permissions.ts";
import { ConflictError, InputError, NotFoundError } from "../errors.ts";

export interface Group {
  id: number;
  name: string;
  description: string;
  created_at: Date;
}

export interface Grants {
  mcp_privileges: string[];
  connection_privileges: Array<{ connection_id: number; access_level: AccessLevel }>;
  admin_permissions: string[];
}

async function unique<T>(work: () => Promise<T>, message: string): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if ((err as { code?: string }).code === "23505") throw new ConflictError(message);
    throw err;
  }
}

export async function createGroup(db: Queryable, name: string, description: string): Promise<Group> {
  return unique(
    async () => (await db.query<Group>("INSERT INTO user_groups (name, description) VALUES ($1, $2) RETURNING *", [name, description]))[0],
    `a group named \`${name}\` already exists`,
  );
}

export async function getGroup(db: Queryable, id: number): Promise<Group> {
  const [group] = await db.query<Group>("SELECT * FROM user_groups WHERE id = $1", [id]);
  if (!group) throw new NotFoundError(`group ${id} not found`);
  return group;
}

export const listGroups = (db: Queryable) =>
  db.query<Group & { member_count: number }>(
    "SELECT g.*, (SELECT count(*)::int FROM group_members m WHERE m.group_id = g.id) AS member_count FROM user_groups g ORDER BY lower(g.name)",
  );

export async function updateGroup(db: Queryable, id: number, changes: { name?: string; description?: string }): Promise<Group> {
  const current = await getGroup(db, id);
  return unique(
    async () =>
      (
        await db.query<Group>("UPDATE user_groups SET name = $2, description = $3 WHERE id = $1 RETURNING *", [
          id,
          changes.name ?? current.name,
          changes.description ?? current.description,
        ])
      )[0],
    `a group named \`${changes.name}\` already exists`,
  );
}

export async function deleteGroup(db: Queryable, id: number): Promise<void> {
  if ((await db.query("DELETE FROM user_groups WHERE id = $1 RETURNING id", [id])).length === 0) throw new NotFoundError(`group ${id} not found`);
}

export async function groupMembers(db: Queryable, id: number) {
  return db.query<{ type: "user" | "group"; id: number; name: string }>(
    `SELECT 'user' AS type, u.id, u.username AS name FROM group_members m JOIN users u ON u.id = m.member_user_id WHERE m.group_id = $1
     UNION ALL
     SELECT 'group' AS type, g.id, g.name FROM group_members m JOIN user_groups g ON g.id = m.member_group_id WHERE m.group_id = $1
     ORDER BY 1, 3`,
    [id],
  );
}

/** The group and every group it is (transitively) a member of. */
const ANCESTORS = `WITH RECURSIVE up(id) AS (SELECT $1::int UNION SELECT m.group_id FROM group_members m JOIN up ON m.member_group_id = up.id) SELECT id FROM up`;

export async function addMember(db: Queryable, groupId: number, member: { type: "user" | "group"; id: number }): Promise<void> {
  await getGroup(db, groupId);
  if (member.type === "group") {
    await getGroup(db, member.id);
    const ancestors = await db.query<{ id: number }>(ANCESTORS, [groupId]);
    if (ancestors.some((a) => a.id === member.id)) throw new InputError(`adding group ${member.id} to group ${groupId} would create a cycle`);
  } else if ((await db.query("SELECT 1 FROM users WHERE id = $1", [member.id])).length === 0) throw new NotFoundError(`user ${member.id} not found`);
  const column = member.type === "user" ? "member_user_id" : "member_group_id";
  await unique(
    () => db.query(`INSERT INTO group_members (group_id, ${column}) VALUES ($1, $2)`, [groupId, member.id]),
    `${member.type} ${member.id} is already a member of group ${groupId}`,
  );
}

export async function removeMember(db: Queryable, groupId: number, member: { type: "user" | "group"; id: number }): Promise<void> {
  const column = member.type === "user" ? "member_user_id" : "member_group_id";
  const rows = await db.query(`DELETE FROM group_members WHERE group_id = $1 AND ${column} = $2 RETURNING group_id`, [groupId, member.id]);
  if (rows.length === 0) throw new NotFoundError(`${member.type} ${member.id} is not a member of group ${groupId}`);
}

/** Grants held directly by the given groups, merged (the highest connection level wins). */
async function grantsOf(db: Queryable, groupIds: readonly number[]): Promise<Grants> {
  const [mcp, connections, admin] = await Promise.all([
    db.query<{ identifier: string }>("SELECT DISTINCT identifier FROM group_mcp_privileges WHERE group_id = ANY($1::int[]) ORDER BY 1", [groupIds]),
    db.query<{ connection_id: number; access_level: AccessLevel }>(
      "SELECT connection_id, max(access_level) AS access_level FROM group_connection_privileges WHERE group_id = ANY($1::int[]) GROUP BY 1 ORDER BY 1",
      [groupIds],
    ),
    db.query<{ permission: string }>("SELECT DISTINCT permission FROM group_admin_permissions WHERE group_id = ANY($1::int[]) ORDER BY 1", [groupIds]),
  ]);
  return { mcp_privileges: mcp.map((m) => m.identifier), connection_privileges: connections, admin_permissions: admin.map((a) => a.permission) };
}

/** Grants held by the group itself. */
export async function directGrants(db: Queryable, groupId: number): Promise<Grants> {
  await getGroup(db, groupId);
  return grantsOf(db, [groupId]);
}

/** What members of a group receive: its own grants and those of every group it belongs to. */
export async function effectiveGroupGrants(db: Queryable, groupId: number): Promise<Grants> {
  await getGroup(db, groupId);
  return grantsOf(
    db,
    (await db.query<{ id: number }>(ANCESTORS, [groupId])).map((g) => g.id),
  );
}

/** Every group a user belongs to, directly or through nesting, and the grants they add up to. */
export async function userGroupsAndGrants(db: Queryable, userId: number): Promise<{ groups: string[]; grants: Grants }> {
  const groups = await db.query<{ id: number; name: string }>(
    `WITH RECURSIVE up(id) AS (SELECT group_id FROM group_members WHERE member_user_id = $1
                               UNION SELECT m.group_id FROM group_members m JOIN up ON m.member_group_id = up.id)
     SELECT g.id, g.name FROM up JOIN user_groups g ON g.id = up.id ORDER BY g.name`,
    [userId],
  );
  return {
    groups: groups.map((g) => g.name),
    grants: await grantsOf(
      db,
      groups.map((g) => g.id),
    ),
  };
}

export async function setMcpGrants(db: Queryable, groupId: number, identifiers: readonly string[]): Promise<void> {
  await getGroup(db, groupId);
  await db.query("DELETE FROM group_mcp_privileges WHERE group_id = $1", [groupId]);
  for (const identifier of new Set(identifiers)) await db.query("INSERT INTO group_mcp_privileges VALUES ($1, $2)", [groupId, identifier]);
}

export async function setConnectionGrants(db: Queryable, groupId: number, grants: Grants["connection_privileges"]): Promise<void> {
  await getGroup(db, groupId);
  await db.query("DELETE FROM group_connection_privileges WHERE group_id = $1", [groupId]);
  for (const g of grants) {
    await unique(
      () => db.query("INSERT INTO group_connection_privileges VALUES ($1, $2, $3)", [groupId, g.connection_id, g.access_level]),
      `connection ${g.connection_id} is listed twice`,
    );
  }
}

export async function setAdminGrants(db: Queryable, groupId: number, permissions: readonly string[]): Promise<void> {
  await getGroup(db, groupId);
  await db.query("DELETE FROM group_admin_permissions WHERE group_id = $1", [groupId]);
  for (const p of new Set(permissions)) await db.query("INSERT INTO group_admin_permissions VALUES ($1, $2)", [groupId, p]);
}

/** Every MCP privilege a group can be granted (tools and other items), by identifier. */
export function listMcpPrivileges(db: Queryable) {
  return db.query<{ id: number; identifier: string; item_type: "tool" | "resource" | "prompt"; description: string; is_public: boolean }>(
    "SELECT id, identifier, item_type, description, is_public FROM mcp_privileges ORDER BY identifier",
  );
}
