import { createRoute, z } from "@hono/zod-openapi";
import { checkConnectionIds, checkMcpIdentifiers } from "../auth/grant-references.ts";
import { issueApiToken } from "../auth/issue-token.ts";
import { ACCESS_LEVELS, ADMIN_PERMISSIONS, ALL } from "../auth/permissions.ts";
import { clearTokenScope, deleteApiToken, getApiToken, getTokenScope, listApiTokens, setTokenScope, type ApiTokenRow } from "../datastore/api-tokens.ts";
import { admin, guarded } from "../http/access.ts";
import { ApiError } from "../http/errors.ts";
import { IdParam, json, jsonBody, noContent } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";

const tags = ["RBAC"];
const base = "/api/v1/rbac/tokens";
const MANAGE_TOKENS = admin("manage_token_scopes");

const Scope = z
  .object({
    connections: z.array(z.object({ connection_id: z.number().int().min(0), access_level: z.enum(ACCESS_LEVELS) })).optional(),
    mcp_privileges: z.array(z.string().min(1)).optional(),
    admin_permissions: z.array(z.enum([...ADMIN_PERMISSIONS, ALL])).optional(),
  })
  .strict()
  .openapi("TokenScope", { description: "Each dimension present restricts the token to what it lists (it can only narrow the owner's rights); an absent or empty one does not restrict" });

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
    scope: ScopeOut,
  })
  .openapi("ApiToken");

const NewToken = z
  .object({
    owner_username: z.string().min(1).optional().openapi({ description: "Owner of the token; default the caller" }),
    note: z.string().max(500).optional(),
    expires_in: z.string().optional().openapi({ description: "12h, 30d, 2w, 6m, 1y or never (default)" }),
  })
  .strict();

const Created = z
  .object({ id: z.number().int(), token: z.string().openapi({ description: "Shown once; only its hash is stored" }), owner: z.string(), note: z.string(), expires_at: z.string().nullable() })
  .openapi("CreatedApiToken");

const r = {
  list: guarded(MANAGE_TOKENS, createRoute({ method: "get", path: base, tags, summary: "List API tokens (never the secrets)", responses: { 200: json(z.object({ tokens: z.array(Token) }), "Tokens"), ...errorResponses(401, 403) } })),
  create: guarded(
    MANAGE_TOKENS,
    createRoute({ method: "post", path: base, tags, summary: "Create an API token; the secret is in this answer only", request: { body: jsonBody(NewToken) }, responses: { 201: json(Created, "Created"), ...errorResponses(400, 401, 403) } }),
  ),
  remove: guarded(MANAGE_TOKENS, createRoute({ method: "delete", path: `${base}/{id}`, tags, summary: "Delete (revoke) a token", request: { params: IdParam }, responses: { ...noContent, ...errorResponses(401, 403, 404) } })),
  getScope: guarded(MANAGE_TOKENS, createRoute({ method: "get", path: `${base}/{id}/scope`, tags, summary: "A token's scope", request: { params: IdParam }, responses: { 200: json(ScopeOut, "Scope"), ...errorResponses(401, 403, 404) } })),
  putScope: guarded(
    MANAGE_TOKENS,
    createRoute({ method: "put", path: `${base}/{id}/scope`, tags, summary: "Set the dimensions given; the others keep their value", request: { params: IdParam, body: jsonBody(Scope) }, responses: { 200: json(ScopeOut, "Scope"), ...errorResponses(400, 401, 403, 404) } }),
  ),
  clearScope: guarded(MANAGE_TOKENS, createRoute({ method: "delete", path: `${base}/{id}/scope`, tags, summary: "Remove every scope restriction", request: { params: IdParam }, responses: { ...noContent, ...errorResponses(401, 403, 404) } })),
};

async function tokenJson(db: Parameters<typeof getTokenScope>[0], t: ApiTokenRow) {
  return {
    id: t.id,
    owner: t.username,
    owner_is_superuser: t.is_superuser,
    owner_is_service_account: t.is_service_account,
    note: t.note,
    token_prefix: t.token_prefix,
    created_at: t.created_at.toISOString(),
    expires_at: t.expires_at?.toISOString() ?? null,
    scope: await getTokenScope(db, t.id),
  };
}

export const rbacTokenRoutes = newRouter()
  .openapi(r.list, async (c) => {
    const db = c.get("db");
    return c.json({ tokens: await Promise.all((await listApiTokens(db)).map((t) => tokenJson(db, t))) }, 200);
  })
  .openapi(r.create, async (c) => {
    const body = c.req.valid("json");
    const caller = c.get("principal")!;
    const issued = await c.get("db").transaction(async (tx) => {
      const t = await issueApiToken(tx, { owner: body.owner_username ?? caller.username, note: body.note, expires: body.expires_in });
      // A token acts with its owner's rights: only a superuser may mint one for a superuser.
      if (t.owner_is_superuser && !caller.isSuperuser) throw new ApiError(403, "only a superuser can create tokens owned by a superuser");
      return t;
    });
    return c.json({ id: issued.id, token: issued.token, owner: issued.owner, note: issued.note, expires_at: issued.expires_at }, 201);
  })
  .openapi(r.remove, async (c) => {
    await deleteApiToken(c.get("db"), c.req.valid("param").id);
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
    await getApiToken(db, id);
    if (scope.connections) await checkConnectionIds(db, scope.connections.map((s) => s.connection_id));
    if (scope.mcp_privileges) await checkMcpIdentifiers(db, scope.mcp_privileges);
    await db.transaction((tx) => setTokenScope(tx, id, scope));
    return c.json(await getTokenScope(db, id), 200);
  })
  .openapi(r.clearScope, async (c) => {
    const { id } = c.req.valid("param");
    await getApiToken(c.get("db"), id);
    await c.get("db").transaction((tx) => clearTokenScope(tx, id));
    return c.body(null, 204);
  });
