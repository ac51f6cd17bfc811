import { createRoute, z } from "@hono/zod-openapi";
import { checkPasswordPolicy, hashPassword } from "../auth/passwords.ts";
import { assertCovers, userAuthority } from "../auth/escalation.ts";
import { actsAsSuperuser, effectiveGrants } from "../auth/rbac.ts";
import { deleteUserSessions } from "../datastore/sessions.ts";
import { createUser, deleteUser, getUser, listUsers, otherEnabledSuperusers, updateUser, userJson } from "../datastore/users.ts";
import { admin, authority, guarded } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import type { Context } from "hono";
import type { Queryable } from "../../drivers/types.ts";
import type { User as UserRow } from "../datastore/users.ts";
import { ApiError } from "../http/errors.ts";
import { IdParam, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";

const User = z
  .object({
    id: z.number().int(),
    username: z.string(),
    display_name: z.string(),
    email: z.string(),
    annotation: z.string(),
    enabled: z.boolean(),
    locked: z.boolean().openapi({ description: "Locked after repeated failed logins; re-enable to unlock" }),
    is_superuser: z.boolean(),
    is_service_account: z.boolean(),
    last_login: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("User");

const Privileges = z
  .object({
    username: z.string(),
    is_superuser: z.boolean(),
    groups: z.array(z.string()),
    mcp_privileges: z.array(z.string()),
    connection_privileges: z.array(z.object({ connection_id: z.number().int(), access_level: z.enum(["read", "read_write"]) })),
    admin_permissions: z.array(z.string()),
  })
  .openapi("EffectivePrivileges");

const NewUser = z
  .object({
    username: z.string().min(1),
    password: z.string().optional().openapi({ description: "Required unless is_service_account; at least 12 characters, not a common password" }),
    display_name: z.string().max(200).optional(),
    email: z.string().max(320).optional(),
    annotation: z.string().max(1000).optional(),
    enabled: z.boolean().optional(),
    is_superuser: z.boolean().optional(),
    is_service_account: z.boolean().optional().openapi({ description: "An account that cannot log in and owns API tokens" }),
  })
  .strict()
  .openapi("NewUser");

const UserChanges = NewUser.omit({ username: true, is_service_account: true }).strict().openapi("UserChanges");

const MANAGE_USERS = admin("manage_users");
const tags = ["RBAC"];
const base = "/api/v1/rbac/users";

const list = guarded(
  MANAGE_USERS,
  createRoute({
    method: "get",
    path: base,
    tags,
    summary: "List users",
    responses: { 200: json(z.object({ users: z.array(User) }), "Users"), ...errorResponses(401, 403) },
  }),
);
const create = guarded(
  MANAGE_USERS,
  createRoute({
    method: "post",
    path: base,
    tags,
    summary: "Create a user",
    request: { body: jsonBody(NewUser) },
    responses: { 201: json(User, "Created"), ...errorResponses(400, 401, 403, 409) },
  }),
);
const update = guarded(
  MANAGE_USERS,
  createRoute({
    method: "put",
    path: `${base}/{id}`,
    tags,
    summary: "Update a user (enabled: true also lifts a lockout; a new password ends its sessions)",
    request: { params: IdParam, body: jsonBody(UserChanges) },
    responses: { 200: json(User, "Updated"), ...errorResponses(400, 401, 403, 404, 409) },
  }),
);
const remove = guarded(
  MANAGE_USERS,
  createRoute({
    method: "delete",
    path: `${base}/{id}`,
    tags,
    summary: "Delete a user with its sessions and tokens",
    request: { params: IdParam },
    responses: { ...noContent, ...errorResponses(401, 403, 404, 409) },
  }),
);
const privileges = guarded(
  MANAGE_USERS,
  createRoute({
    method: "get",
    path: `${base}/{id}/privileges`,
    tags,
    summary: "Effective privileges of a user",
    request: { params: IdParam },
    responses: { 200: json(Privileges, "Privileges"), ...errorResponses(401, 403, 404) },
  }),
);

function requireSuperuserFor(isSuperuserChange: boolean | undefined, callerIsSuperuser: boolean) {
  if (isSuperuserChange !== undefined && !callerIsSuperuser) throw new ApiError(403, "only a superuser can grant or remove superuser status");
}

/**
 * Changing or deleting an account is acting as it (a new password logs in as it): only a superuser may touch
 * a superuser account, and anyone else only accounts whose rights they hold themselves.
 */
async function assertMayManage(c: Context<AppEnv>, target: UserRow, action: string) {
  const caller = await authority(c);
  if (target.is_superuser && !actsAsSuperuser(caller)) throw new ApiError(403, "only a superuser can change or delete a superuser account");
  await assertCovers(c.get("db"), caller, await userAuthority(c.get("db"), target), action);
}

/** The last enabled superuser cannot remove itself: nobody could administer pglens afterwards. */
async function assertNotLastSuperuser(db: Queryable, target: UserRow) {
  if (!target.is_superuser || !target.enabled) return;
  if ((await otherEnabledSuperusers(db, target.id)) === 0)
    throw new ApiError(409, `${target.username} is the last enabled superuser; make another superuser first`);
}

export const rbacUserRoutes = newRouter()
  .openapi(list, async (c) => c.json({ users: (await listUsers(c.get("db"))).map(userJson) }, 200))
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    requireSuperuserFor(body.is_superuser, actsAsSuperuser(await authority(c)));
    let passwordHash: string | null = null;
    if (!body.is_service_account) {
      if (!body.password) throw new ApiError(400, "body field `password`: required for a user who logs in (or set is_service_account)");
      checkPasswordPolicy(body.password, body.username);
      passwordHash = await hashPassword(body.password);
    } else if (body.password) throw new ApiError(400, "body field `password`: a service account has no password");
    const user = await createUser(c.get("db"), {
      username: body.username,
      passwordHash,
      displayName: body.display_name,
      email: body.email,
      annotation: body.annotation,
      enabled: body.enabled,
      isSuperuser: body.is_superuser,
      isServiceAccount: body.is_service_account,
    });
    return c.json(userJson(user), 201);
  })
  .openapi(update, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = c.get("db");
    const target = await getUser(db, id);
    requireSuperuserFor(body.is_superuser, actsAsSuperuser(await authority(c)));
    await assertMayManage(c, target, `changing user ${target.username}`);
    if (body.is_superuser === false || body.enabled === false) await assertNotLastSuperuser(db, target);
    if (body.password !== undefined) {
      if (target.is_service_account) throw new ApiError(400, "body field `password`: a service account has no password");
      checkPasswordPolicy(body.password, target.username);
    }
    const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password);
    const user = await db.transaction(async (tx) => {
      const updated = await updateUser(tx, id, {
        passwordHash,
        display_name: body.display_name,
        email: body.email,
        annotation: body.annotation,
        enabled: body.enabled,
        is_superuser: body.is_superuser,
      });
      if (passwordHash !== undefined || body.enabled === false) await deleteUserSessions(tx, id);
      return updated;
    });
    return c.json(userJson(user), 200);
  })
  .openapi(remove, async (c) => {
    const db = c.get("db");
    const target = await getUser(db, c.req.valid("param").id);
    await assertMayManage(c, target, `deleting user ${target.username}`);
    await assertNotLastSuperuser(db, target);
    await deleteUser(db, target.id);
    return c.body(null, 204);
  })
  .openapi(privileges, async (c) => {
    const db = c.get("db");
    const user = await getUser(db, c.req.valid("param").id);
    const a = await userAuthority(db, user);
    return c.json({ username: user.username, is_superuser: user.is_superuser, groups: a.groups, ...effectiveGrants(a) }, 200);
  });
