/**
 * The one declarative place where every route states who may call it. `guarded(access, route)` adds the
 * check as the route's first middleware (before any body is read), the OpenAPI `security` requirement and an
 * `x-pglens-access` note; createApp refuses to start when a registered route has no decision.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { type Authority, actsAsSuperuser, hasAdminPermission, loadAuthority } from "../auth/rbac.ts";
import type { AdminPermission } from "../vocabulary/permissions.ts";
import type { AppEnv } from "./context.ts";
import { ApiError } from "./errors.ts";
import { rejectNul } from "./storable-text.ts";

export type Access = { kind: "public" } | { kind: "user" } | { kind: "admin"; permission: AdminPermission } | { kind: "superuser" };

export const PUBLIC: Access = { kind: "public" };
/** Any authenticated caller; the handler filters what it shows by the caller's rights. */
export const USER: Access = { kind: "user" };
export const SUPERUSER: Access = { kind: "superuser" };
export const admin = (permission: AdminPermission): Access => ({ kind: "admin", permission });

export function describeAccess(a: Access): string {
  return a.kind === "admin" ? `permission:${a.permission}` : a.kind;
}

const decisions = new Map<string, Access>();
const key = (method: string, honoPath: string) => `${method.toUpperCase()} ${honoPath}`;
const toHonoPath = (openApiPath: string) => openApiPath.replace(/\{(\w+)\}/g, ":$1");

/** Records a decision for a route not built with `guarded` (e.g. the OpenAPI document, /mcp/v1). */
export function declareAccess(method: string, honoPath: string, access: Access): Access {
  decisions.set(key(method, honoPath), access);
  return access;
}

export function accessOf(method: string, honoPath: string): Access | undefined {
  return decisions.get(key(method, honoPath));
}

export async function authority(c: Context<AppEnv>): Promise<Authority> {
  const cached = c.get("authority");
  if (cached) return cached;
  const principal = c.get("principal");
  if (!principal) throw new ApiError(401, "authentication required");
  const loaded = await loadAuthority(c.get("db"), principal);
  c.set("authority", loaded);
  return loaded;
}

const UNAUTHENTICATED = { "WWW-Authenticate": 'Bearer realm="pglens"' };

export function requireAccess(access: Access): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (access.kind === "public") return next();
    const principal = c.get("principal");
    if (!principal) {
      const message = c.get("credentialRejected") ? "invalid or expired token" : "authentication required: send `Authorization: Bearer <token>`";
      throw new ApiError(401, message, UNAUTHENTICATED);
    }
    if (access.kind === "superuser" && !actsAsSuperuser(await authority(c)))
      throw new ApiError(403, "this requires a superuser (with a session or an unscoped token)");
    if (access.kind === "admin" && !hasAdminPermission(await authority(c), access.permission))
      throw new ApiError(403, `this requires the ${access.permission} permission`);
    return next();
  };
}

/**
 * A stable, unique operationId from the method and path (client generators name methods after it):
 * `GET /api/v1/alerts/{id}` -> `getAlertsById`.
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v1/, "")
    .split("/")
    .filter(Boolean)
    .flatMap((segment) => (segment.startsWith("{") ? ["by", ...segment.slice(1, -1).split(/[-_]/)] : segment.split(/[-_.]/)));
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

export function guarded<R extends RouteConfig>(access: Access, route: R): R {
  declareAccess(route.method, toHonoPath(route.path), access);
  return {
    operationId: operationIdOf(route.method, route.path),
    ...route,
    security: access.kind === "public" ? [] : [{ bearerAuth: [] }],
    "x-pglens-access": describeAccess(access),
    middleware: [requireAccess(access), rejectNul, ...(route.middleware ? [route.middleware].flat() : [])],
  } as R;
}
