import { createRoute, z } from "@hono/zod-openapi";
import { deleteCookie, setCookie } from "hono/cookie";
import { login } from "../auth/login.ts";
import { effectiveGrants } from "../auth/rbac.ts";
import { deleteSession } from "../datastore/sessions.ts";
import { PUBLIC, USER, authority, guarded } from "../http/access.ts";
import { SESSION_COOKIE } from "../http/authenticate.ts";
import { ApiError } from "../http/errors.ts";
import { json } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { enabledTools } from "../mcp/tools/index.ts";
import { VERSION } from "../version.ts";

const loginRoute = guarded(
  PUBLIC,
  createRoute({
    method: "post",
    path: "/api/v1/auth/login",
    tags: ["Authentication"],
    summary: "Log in with a username and password; answers a session token and sets it as a cookie",
    request: {
      body: {
        required: true,
        content: {
          "application/json": { schema: z.object({ username: z.string().min(1).max(128), password: z.string().min(1).max(1024) }).openapi("LoginRequest") },
        },
      },
    },
    responses: {
      200: json(z.object({ token: z.string(), expires_at: z.string().openapi({ format: "date-time" }) }).openapi("LoginResponse"), "Logged in"),
      ...errorResponses(400, 401, 429),
    },
  }),
);

// Public: clearing the session cookie must work even when the session behind it has expired or is gone.
const logoutRoute = guarded(
  PUBLIC,
  createRoute({
    method: "post",
    path: "/api/v1/auth/logout",
    tags: ["Authentication"],
    summary: "End the session (if any) and clear its cookie",
    responses: { 200: json(z.object({ message: z.string() }), "Logged out") },
  }),
);

const UserInfo = z
  .object({
    id: z.number().int(),
    username: z.string(),
    is_superuser: z.boolean(),
    authenticated_via: z.enum(["session", "api_token"]),
    groups: z.array(z.string()),
    admin_permissions: z.array(z.string()),
    mcp_privileges: z.array(z.string()),
    token_scope: z
      .object({
        connections: z.array(z.object({ connection_id: z.number(), access_level: z.string() })).optional(),
        mcp_privileges: z.array(z.string()).optional(),
        admin_permissions: z.array(z.string()).optional(),
      })
      .optional(),
  })
  .openapi("UserInfo");

const userInfoRoute = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/user/info",
    tags: ["Authentication"],
    summary: "The calling user and its rights",
    responses: { 200: json(UserInfo, "The caller"), ...errorResponses(401) },
  }),
);

const capabilitiesRoute = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/capabilities",
    tags: ["Authentication"],
    summary: "What this server offers",
    responses: {
      200: json(
        z.object({ version: z.string(), ai_enabled: z.boolean(), max_iterations: z.number().int(), tools: z.array(z.string()) }).openapi("Capabilities"),
        "Capabilities",
      ),
      ...errorResponses(401),
    },
  }),
);

export const authRoutes = newRouter()
  .openapi(loginRoute, async (c) => {
    const { username, password } = c.req.valid("json");
    const outcome = await login(c.get("db"), c.get("config"), c.get("log"), { username, password, clientAddress: c.get("clientAddress") });
    if (!outcome.ok && outcome.reason === "throttled")
      throw new ApiError(429, "too many failed logins; try again later", { "Retry-After": String(outcome.retryAfterSeconds) });
    if (!outcome.ok) return c.json({ error: "invalid username or password" }, 401);
    setCookie(c, SESSION_COOKIE, outcome.token, {
      httpOnly: true,
      sameSite: "Lax",
      path: "/",
      secure: c.get("secureTransport"),
      expires: outcome.expiresAt,
    });
    return c.json({ token: outcome.token, expires_at: outcome.expiresAt.toISOString() }, 200);
  })
  .openapi(logoutRoute, async (c) => {
    const principal = c.get("principal");
    if (principal?.via === "session") await deleteSession(c.get("db"), principal.tokenHash);
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    const message = !principal
      ? "no active session; the session cookie is cleared"
      : principal.via === "session"
        ? "logged out"
        : "API tokens stay valid; delete them with DELETE /api/v1/rbac/tokens/{id}";
    return c.json({ message }, 200);
  })
  .openapi(userInfoRoute, async (c) => {
    const a = await authority(c);
    const grants = effectiveGrants(a);
    const scoped = Object.keys(a.scope).length > 0;
    return c.json(
      {
        id: a.principal.userId,
        username: a.principal.username,
        is_superuser: a.principal.isSuperuser,
        authenticated_via: a.principal.via,
        groups: a.groups,
        admin_permissions: grants.admin_permissions,
        mcp_privileges: grants.mcp_privileges,
        ...(scoped ? { token_scope: a.scope } : {}),
      },
      200,
    );
  })
  .openapi(capabilitiesRoute, (c) =>
    c.json({ version: VERSION, ai_enabled: false, max_iterations: 50, tools: enabledTools(c.get("config")).map((t) => t.name) }, 200),
  );
