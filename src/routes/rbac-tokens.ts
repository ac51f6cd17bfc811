import { createRoute, z } from "@hono/zod-openapi";
import { checkConnectionIds, checkMcpIdentifiers } from "../auth/grant-references.ts";
import { assertCovers, userAuthority } from "../auth/escalation.ts";
import { DEFAULT_TOKEN_EXPIRY, issueApiToken } from "../auth/issue-token.ts";
import { type Authority, actsAsSuperuser, hasAdminPermission } from "../auth/rbac.ts";
import { findUserByName } from "../datastore/users.ts";
import { ACCESS_LEVELS, ADMIN_PERMISSIONS, ALL } from "../vocabulary/permissions.ts";
import {
  type TokenScope,
  clearTokenScope,
  deleteApiToken,
  getApiToken,
  getTokenScope,
  getTokenScopes,
  isScoped,
  listApiTokens,
  setTokenScope,
  type ApiTokenRow,
} from "../datastore/api-tokens.ts";
import { admin, authority, guarded } from "../http/access.ts";
import type { Queryable } from "../../drivers/types.ts";
import { ApiError } from "../http/errors.ts";
import { INT_MAX, IdParam, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";

const tags = ["RBAC"];
const base = "/api/v1/rbac/tokens";
const MANAGE_TOKENS = admin("manage_token_scopes");

const Scope = z
  .object({
    connections: z.array(z.object({ connection_id: z.number().int().min(0).max(INT_MAX), access_level: z.enum(ACCESS_LEVELS) })).optional(),
    mcp_privileges: z.array(z.string().min(1)).optional(),
    admin_permissions: z.array(z.enum([...ADMIN_PERMISSIONS, ALL])).optional(),
  })
  .strict()
  .openapi("TokenScope", {
    description:
      "Allow-lists: a scoped token may use only what its scope lists, within its owner's rights. Setting any dimension scopes the token; a dimension never set is empty (nothing of that kind); `[]` means nothing. DELETE .../scope returns the token to its owner's full rights.",
  });

const ScopeOut = Scope.extend({ admin_permissions: z.array(z.string()).optional() }).openapi("TokenScopeView");

const Token = z
  .object({
    id: z.number().int(),
    owner: z.string(),
    owner_is_superuser: z.boolean(),
    owner_is_service_account: z.boolean(),
    note: z.string(),
    token_prefix: z.string().openapi({ description: "First 12 hex digits of the token's SHA-256, to tell tokens apart" }),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable().openapi({ description: "Last authenticated use, to the minute" }),
    created_by: z.string().nullable().openapi({ description: "Who minted it; differs from the owner for tokens made for another user" }),
    scope: ScopeOut,
  })
  .openapi("ApiToken");

const NewToken = z
  .object({
    owner_username: z.string().min(1).optional().openapi({ description: "Owner of the token; default the caller" }),
    note: z.string().max(500).optional(),
    expires_in: z.string().optional().openapi({ description: "12h, 30d, 2w, 6m, 1y or never; default 90d for the caller's own token, 30d for another user's" }),
  })
  .strict();

const Created = z
  .object({
    id: z.number().int(),
    token: z.string().openapi({ description: "Shown once; only its hash is stored" }),
    owner: z.string(),
    note: z.string(),
    expires_at: z.string().nullable(),
  })
  .openapi("CreatedApiToken");

const r = {
  list: guarded(
    MANAGE_TOKENS,
    createRoute({
      method: "get",
      path: base,
      tags,
      summary: "List API tokens (never the secrets)",
      responses: { 200: json(z.object({ tokens: z.array(Token) }), "Tokens"), ...errorResponses(401, 403) },
    }),
  ),
  create: guarded(
    MANAGE_TOKENS,
    createRoute({
      method: "post",
      path: base,
      tags,
      summary: "Create an API token; the secret is in this answer only",
      request: { body: jsonBody(NewToken) },
      responses: { 201: json(Created, "Created"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  remove: guarded(
    MANAGE_TOKENS,
    createRoute({
      method: "delete",
      path: `${base}/{id}`,
      tags,
      summary: "Delete (revoke) a token",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
  ),
  getScope: guarded(
    MANAGE_TOKENS,
    createRoute({
      method: "get",
      path: `${base}/{id}/scope`,
      tags,
      summary: "A token's scope",
      request: { params: IdParam },
      responses: { 200: json(ScopeOut, "Scope"), ...errorResponses(401, 403, 404) },
    }),
  ),
  putScope: guarded(
    MANAGE_TOKENS,
    createRoute({
      method: "put",
      path: `${base}/{id}/scope`,
      tags,
      summary: "Scope a token: set the dimensions given (the others keep their lists; never set = empty); only to rights the caller holds",
      request: { params: IdParam, body: jsonBody(Scope) },
      responses: { 200: json(ScopeOut, "Scope"), ...errorResponses(400, 401, 403, 404) },
    }),
  ),
  clearScope: guarded(
    MANAGE_TOKENS,
    createRoute({
      method: "delete",
      path: `${base}/{id}/scope`,
      tags,
      summary: "Remove the scope (the token gets its owner's full rights); only when the caller holds them",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
  ),
};

const DEFAULT_EXPIRY_FOR_OTHERS = "30d";

/**
 * Minting, revoking or rescoping a token: the caller must hold everything the token holds now (a scoped
 * token cannot revoke its owner's broader tokens). Someone else's token acts as them, so it also takes
 * managing users, and a superuser's takes a superuser.
 */
async function assertMayManage(
  db: Queryable,
  caller: Authority,
  token: { owner: { id: number; username: string; is_superuser: boolean }; scope: TokenScope },
  action: string,
) {
  const { owner } = token;
  if (owner.id !== caller.principal.userId) {
    if (!hasAdminPermission(caller, "manage_users"))
      throw new ApiError(403, `${action} needs the manage_users permission too, as the token belongs to another user`);
    if (owner.is_superuser && !actsAsSuperuser(caller)) throw new ApiError(403, `only a superuser can manage tokens owned by a superuser (${action})`);
  }
  await assertCovers(db, caller, { ...(await userAuthority(db, owner)), scope: token.scope }, action);
}

const ownerOf = (t: ApiTokenRow) => ({ id: t.user_id, username: t.username, is_superuser: t.is_superuser });
const existing = async (db: Queryable, t: ApiTokenRow) => ({ owner: ownerOf(t), scope: await getTokenScope(db, t.id) });

/** The rights `token` would have with `scope`: its owner's, narrowed by the scope. */
async function tokenAuthority(db: Queryable, token: ApiTokenRow, scope: TokenScope): Promise<Authority> {
  return { ...(await userAuthority(db, { id: token.user_id, username: token.username, is_superuser: token.is_superuser })), scope };
}

function tokenJson(t: ApiTokenRow, scope: TokenScope) {
  return {
    id: t.id,
    owner: t.username,
    owner_is_superuser: t.is_superuser,
    owner_is_service_account: t.is_service_account,
    note: t.note,
    token_prefix: t.token_prefix,
    created_at: t.created_at.toISOString(),
    expires_at: t.expires_at?.toISOString() ?? null,
    last_used_at: t.last_used_at?.toISOString() ?? null,
    created_by: t.created_by,
    scope,
  };
}

export const rbacTokenRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const db = c.get("db");
    const tokens = await listApiTokens(db);
    const scopes = await getTokenScopes(
      db,
      tokens.map((t) => t.id),
    );
    return c.json({ tokens: tokens.map((t) => tokenJson(t, scopes.get(t.id) ?? {})) }, 200);
  })
  .openapi(r.create, async (c) => {
    const body = c.req.valid("json");
    const db = c.get("db");
    const caller = await authority(c);
    const ownerName = body.owner_username ?? caller.principal.username;
    const owner = await findUserByName(db, ownerName);
    const forOther = owner !== undefined && owner.id !== caller.principal.userId;
    if (forOther) await assertMayManage(db, caller, { owner, scope: {} }, `a token for ${owner.username}`);
    const issued = await db.transaction(async (tx) => {
      const t = await issueApiToken(tx, {
        owner: ownerName,
        note: body.note,
        expires: body.expires_in ?? (forOther ? DEFAULT_EXPIRY_FOR_OTHERS : DEFAULT_TOKEN_EXPIRY),
        createdBy: caller.principal.userId,
      });
      // A scoped token mints only tokens as narrow as itself.
      if (isScoped(caller.scope)) await setTokenScope(tx, t.id, caller.scope);
      return t;
    });
    return c.json({ id: issued.id, token: issued.token, owner: issued.owner, note: issued.note, expires_at: issued.expires_at }, 201);
  })
  .openapi(r.remove, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("db");
    await assertMayManage(db, await authority(c), await existing(db, await getApiToken(db, id)), `revoking token ${id}`);
    await deleteApiToken(db, id);
    return c.body(null, 204);
  })
  .openapi(r.getScope, async (c) => {
    const { id } = c.req.valid("param");
    await getApiToken(c.get("db"), id);
    return c.json(await getTokenScope(c.get("db"), id), 200);
  })
  .openapi(r.putScope, async (c) => {
    const { id } = c.req.valid("param");
    const scope = c.req.valid("json");
    const db = c.get("db");
    const token = await getApiToken(db, id);
    if (scope.connections)
      await checkConnectionIds(
        db,
        scope.connections.map((s) => s.connection_id),
      );
    if (scope.mcp_privileges) await checkMcpIdentifiers(db, scope.mcp_privileges);
    const caller = await authority(c);
    const current = await existing(db, token);
    await assertMayManage(db, caller, current, `scoping token ${id}`);
    const next: TokenScope = {
      connections: scope.connections ?? current.scope.connections ?? [],
      mcp_privileges: scope.mcp_privileges ?? current.scope.mcp_privileges ?? [],
      admin_permissions: scope.admin_permissions ?? current.scope.admin_permissions ?? [],
    };
    await assertCovers(db, caller, await tokenAuthority(db, token, next), `this scope for token ${id}`);
    await db.transaction((tx) => setTokenScope(tx, id, next));
    return c.json(await getTokenScope(db, id), 200);
  })
  .openapi(r.clearScope, async (c) => {
    const { id } = c.req.valid("param");
    const db = c.get("db");
    const token = await getApiToken(db, id);
    const caller = await authority(c);
    await assertMayManage(db, caller, { owner: ownerOf(token), scope: {} }, `removing the scope of token ${id}`);
    await db.transaction((tx) => clearTokenScope(tx, id));
    return c.body(null, 204);
  });
