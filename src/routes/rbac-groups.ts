import { createRoute, z } from "@hono/zod-openapi";
import { checkConnectionIds, checkMcpIdentifiers } from "../auth/grant-references.ts";
import { ACCESS_LEVELS, ADMIN_PERMISSIONS, ALL } from "../vocabulary/permissions.ts";
import {
  addMember,
  createGroup,
  deleteGroup,
  directGrants,
  effectiveGroupGrants,
  getGroup,
  groupMembers,
  listGroups,
  removeMember,
  setAdminGrants,
  setConnectionGrants,
  setMcpGrants,
  updateGroup,
} from "../datastore/groups.ts";
import { assertCovers, grantsAuthority, groupAuthority } from "../auth/escalation.ts";
import { RANK, actsAsSuperuser } from "../auth/rbac.ts";
import { getUser } from "../datastore/users.ts";
import { SUPERUSER, admin, authority, guarded } from "../http/access.ts";
import { ApiError } from "../http/errors.ts";
import type { AppEnv } from "../http/context.ts";
import type { Context } from "hono";
import { INT_MAX, Id, IdParam, PathId, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";

const tags = ["RBAC"];
const base = "/api/v1/rbac/groups";
const MANAGE_GROUPS = admin("manage_groups");
const MANAGE_PERMISSIONS = admin("manage_permissions");

const Group = z.object({ id: z.number().int(), name: z.string(), description: z.string(), created_at: z.string() }).openapi("Group");
const Member = z.object({ type: z.enum(["user", "group"]), id: z.number().int(), name: z.string() });
const GroupDetail = Group.extend({ members: z.array(Member) }).openapi("GroupDetail");
const ConnectionGrant = z.object({
  connection_id: z.number().int().min(0).max(INT_MAX).openapi({ description: "0 means every connection" }),
  access_level: z.enum(ACCESS_LEVELS),
});
const Grants = z
  .object({ mcp_privileges: z.array(z.string()), connection_privileges: z.array(ConnectionGrant), admin_permissions: z.array(z.string()) })
  .openapi("Grants");
const GroupBody = z.object({ name: z.string().min(1).max(200), description: z.string().max(1000).optional() }).strict();
const MemberParams = z.object({
  id: PathId,
  type: z.enum(["user", "group"]),
  memberId: PathId,
});

const NO_GRANTS = { mcp_privileges: [], connection_privileges: [], admin_permissions: [] };

/** Only a superuser may change anything about a superuser account, its group memberships included. */
async function assertMayTouchMember(c: Context<AppEnv>, member: { type: "user" | "group"; id: number }) {
  if (member.type !== "user") return;
  if ((await getUser(c.get("db"), member.id)).is_superuser && !actsAsSuperuser(await authority(c)))
    throw new ApiError(403, "only a superuser can change the groups of a superuser account");
}

const groupJson = (g: { id: number; name: string; description: string; created_at: Date }) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  created_at: g.created_at.toISOString(),
});

const r = {
  list: guarded(
    MANAGE_GROUPS,
    createRoute({
      method: "get",
      path: base,
      tags,
      summary: "List groups",
      responses: { 200: json(z.object({ groups: z.array(Group.extend({ member_count: z.number().int() })) }), "Groups"), ...errorResponses(401, 403) },
    }),
  ),
  create: guarded(
    MANAGE_GROUPS,
    createRoute({
      method: "post",
      path: base,
      tags,
      summary: "Create a group",
      request: { body: jsonBody(GroupBody) },
      responses: { 201: json(Group, "Created"), ...errorResponses(400, 401, 403, 409) },
    }),
  ),
  get: guarded(
    MANAGE_GROUPS,
    createRoute({
      method: "get",
      path: `${base}/{id}`,
      tags,
      summary: "A group and its members",
      request: { params: IdParam },
      responses: { 200: json(GroupDetail, "Group"), ...errorResponses(401, 403, 404) },
    }),
  ),
  update: guarded(
    MANAGE_GROUPS,
    createRoute({
      method: "put",
      path: `${base}/{id}`,
      tags,
      summary: "Rename or describe a group",
      request: { params: IdParam, body: jsonBody(GroupBody.partial().strict()) },
      responses: { 200: json(Group, "Updated"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  remove: guarded(
    MANAGE_GROUPS,
    createRoute({
      method: "delete",
      path: `${base}/{id}`,
      tags,
      summary: "Delete a group",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
  ),
  addMember: guarded(
    MANAGE_GROUPS,
    createRoute({
      method: "post",
      path: `${base}/{id}/members`,
      tags,
      summary: "Add a user or a group (groups nest; cycles are refused)",
      request: { params: IdParam, body: jsonBody(z.union([z.object({ user_id: Id }).strict(), z.object({ group_id: Id }).strict()])) },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  removeMember: guarded(
    MANAGE_GROUPS,
    createRoute({
      method: "delete",
      path: `${base}/{id}/members/{type}/{memberId}`,
      tags,
      summary: "Remove a member",
      request: { params: MemberParams },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  effective: guarded(
    MANAGE_PERMISSIONS,
    createRoute({
      method: "get",
      path: `${base}/{id}/effective-privileges`,
      tags,
      summary: "What members receive: the group's grants and those of every group it belongs to",
      request: { params: IdParam },
      responses: { 200: json(Grants, "Grants"), ...errorResponses(401, 403, 404) },
    }),
  ),
  getMcp: guarded(
    MANAGE_PERMISSIONS,
    createRoute({
      method: "get",
      path: `${base}/{id}/privileges/mcp`,
      tags,
      summary: "MCP items granted to the group",
      request: { params: IdParam },
      responses: { 200: json(z.object({ mcp_privileges: z.array(z.string()) }), "Grants"), ...errorResponses(401, 403, 404) },
    }),
  ),
  putMcp: guarded(
    MANAGE_PERMISSIONS,
    createRoute({
      method: "put",
      path: `${base}/{id}/privileges/mcp`,
      tags,
      summary: "Replace the group's MCP grants (`*` = every item)",
      request: { params: IdParam, body: jsonBody(z.object({ mcp_privileges: z.array(z.string().min(1)) }).strict()) },
      responses: { 200: json(z.object({ mcp_privileges: z.array(z.string()) }), "Grants"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  getConnections: guarded(
    MANAGE_PERMISSIONS,
    createRoute({
      method: "get",
      path: `${base}/{id}/privileges/connections`,
      tags,
      summary: "Connections granted to the group",
      request: { params: IdParam },
      responses: { 200: json(z.object({ connection_privileges: z.array(ConnectionGrant) }), "Grants"), ...errorResponses(401, 403, 404) },
    }),
  ),
  putConnections: guarded(
    MANAGE_PERMISSIONS,
    createRoute({
      method: "put",
      path: `${base}/{id}/privileges/connections`,
      tags,
      summary: "Replace the group's connection grants (connection 0 = every connection)",
      request: { params: IdParam, body: jsonBody(z.object({ connection_privileges: z.array(ConnectionGrant) }).strict()) },
      responses: { 200: json(z.object({ connection_privileges: z.array(ConnectionGrant) }), "Grants"), ...errorResponses(400, 401, 403, 404, 409) },
    }),
  ),
  getPermissions: guarded(
    SUPERUSER,
    createRoute({
      method: "get",
      path: `${base}/{id}/permissions`,
      tags,
      summary: "Admin permissions of the group",
      request: { params: IdParam },
      responses: { 200: json(z.object({ admin_permissions: z.array(z.string()) }), "Permissions"), ...errorResponses(401, 403, 404) },
    }),
  ),
  putPermissions: guarded(
    SUPERUSER,
    createRoute({
      method: "put",
      path: `${base}/{id}/permissions`,
      tags,
      summary: "Replace the group's admin permissions (`*` = all); superusers only",
      request: { params: IdParam, body: jsonBody(z.object({ admin_permissions: z.array(z.enum([...ADMIN_PERMISSIONS, ALL])) }).strict()) },
      responses: { 200: json(z.object({ admin_permissions: z.array(z.string()) }), "Permissions"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
};

export const rbacGroupRoutes = newRouter()
  .openapi(r.list, async (c) => c.json({ groups: (await listGroups(c.get("db"))).map((g) => ({ ...groupJson(g), member_count: g.member_count })) }, 200))
  .openapi(r.create, async (c) => {
    const { name, description } = c.req.valid("json");
    return c.json(groupJson(await createGroup(c.get("db"), name, description ?? "")), 201);
  })
  .openapi(r.get, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("db");
    return c.json({ ...groupJson(await getGroup(db, id)), members: await groupMembers(db, id) }, 200);
  })
  .openapi(r.update, async (c) => c.json(groupJson(await updateGroup(c.get("db"), c.req.valid("param").id, c.req.valid("json"))), 200))
  .openapi(r.remove, async (c) => {
    const { id } = c.req.valid("param");
    // Deleting a group takes its rights from everyone in it: only someone holding them all may.
    await assertCovers(c.get("db"), await authority(c), await groupAuthority(c.get("db"), id), `deleting group ${id}`);
    await deleteGroup(c.get("db"), id);
    return c.body(null, 204);
  })
  .openapi(r.addMember, async (c) => {
    const body = c.req.valid("json");
    const member = "user_id" in body ? { type: "user" as const, id: body.user_id } : { type: "group" as const, id: body.group_id };
    const { id } = c.req.valid("param");
    const db = c.get("db");
    await assertMayTouchMember(c, member);
    // The member (and, for a group, everyone in it) receives what this group and its ancestors hold.
    await assertCovers(db, await authority(c), await groupAuthority(db, id), `adding a member to group ${id}`);
    await addMember(db, id, member);
    return c.body(null, 204);
  })
  .openapi(r.removeMember, async (c) => {
    const { id, type, memberId } = c.req.valid("param");
    await assertMayTouchMember(c, { type, id: memberId });
    // Taking a member out of a group takes its rights away: as with adding, only someone holding them all may.
    await assertCovers(c.get("db"), await authority(c), await groupAuthority(c.get("db"), id), `removing a member from group ${id}`);
    await removeMember(c.get("db"), id, { type, id: memberId });
    return c.body(null, 204);
  })
  .openapi(r.effective, async (c) => c.json(await effectiveGroupGrants(c.get("db"), c.req.valid("param").id), 200))
  .openapi(r.getMcp, async (c) => c.json({ mcp_privileges: (await directGrants(c.get("db"), c.req.valid("param").id)).mcp_privileges }, 200))
  .openapi(r.putMcp, async (c) => {
    const { id } = c.req.valid("param");
    const { mcp_privileges } = c.req.valid("json");
    const db = c.get("db");
    await checkMcpIdentifiers(db, mcp_privileges);
    const held = (await directGrants(db, id)).mcp_privileges;
    // Granting and revoking alike: nobody hands out, or takes away, an item they do not hold.
    const changed = [...mcp_privileges.filter((p) => !held.includes(p)), ...held.filter((p) => !mcp_privileges.includes(p))];
    await assertCovers(db, await authority(c), grantsAuthority({ ...NO_GRANTS, mcp_privileges: changed }), `changing ${changed.join(", ")} on group ${id}`);
    await c.get("db").transaction((tx) => setMcpGrants(tx, id, mcp_privileges));
    return c.json({ mcp_privileges: (await directGrants(c.get("db"), id)).mcp_privileges }, 200);
  })
  .openapi(r.getConnections, async (c) =>
    c.json({ connection_privileges: (await directGrants(c.get("db"), c.req.valid("param").id)).connection_privileges }, 200),
  )
  .openapi(r.putConnections, async (c) => {
    const { id } = c.req.valid("param");
    const { connection_privileges } = c.req.valid("json");
    const db = c.get("db");
    await checkConnectionIds(
      db,
      connection_privileges.map((g) => g.connection_id),
    );
    const held = (await directGrants(db, id)).connection_privileges;
    const covers = (list: typeof held, g: (typeof held)[number]) =>
      list.some((h) => h.connection_id === g.connection_id && RANK[h.access_level] >= RANK[g.access_level]);
    const added = connection_privileges.filter((g) => !covers(held, g));
    const taken = held.filter((h) => !covers(connection_privileges, h));
    await assertCovers(
      db,
      await authority(c),
      grantsAuthority({ ...NO_GRANTS, connection_privileges: [...added, ...taken] }),
      `changing these connection privileges of group ${id}`,
    );
    await c.get("db").transaction((tx) => setConnectionGrants(tx, id, connection_privileges));
    return c.json({ connection_privileges: (await directGrants(c.get("db"), id)).connection_privileges }, 200);
  })
  .openapi(r.getPermissions, async (c) => c.json({ admin_permissions: (await directGrants(c.get("db"), c.req.valid("param").id)).admin_permissions }, 200))
  .openapi(r.putPermissions, async (c) => {
    const { id } = c.req.valid("param");
    await c.get("db").transaction((tx) => setAdminGrants(tx, id, c.req.valid("json").admin_permissions));
    return c.json({ admin_permissions: (await directGrants(c.get("db"), id)).admin_permissions }, 200);
  });
