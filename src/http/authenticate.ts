/** Resolves the caller from `Authorization: Bearer` or the session cookie; routes decide what that allows. */
import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { authenticate } from "../auth/principal.ts";
import type { AppEnv } from "./context.ts";

export const SESSION_COOKIE = "pglens_session";

/** The bearer token of a request: the Authorization header wins; a non-Bearer header is a rejected credential. */
export function presentedToken(header: string | undefined, cookie: string | undefined): { token?: string; malformed: boolean } {
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? { token: match[1], malformed: false } : { malformed: true };
  }
  return cookie ? { token: cookie, malformed: false } : { malformed: false };
}

export const resolvePrincipal: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { token, malformed } = presentedToken(c.req.header("authorization"), getCookie(c, SESSION_COOKIE));
  if (malformed) c.set("credentialRejected", true);
  else if (token) {
    const principal = await authenticate(c.get("db"), token);
    if (principal) c.set("principal", principal);
    else c.set("credentialRejected", true);
  }
  return next();
};
