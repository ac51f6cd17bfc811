/** Resolves the caller from `Authorization: Bearer` or the session cookie; routes decide what that allows. */
import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { CallerCache } from "../auth/caller-cache.ts";
import { resolveCaller } from "../auth/principal.ts";
import { tokenHash } from "../auth/tokens.ts";
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

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Sets the caller and its authority; `cache` spares the datastore repeated lookups of one token (auth/caller-cache.ts). */
export function identifyCaller(cache: CallerCache): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { token, malformed } = presentedToken(c.req.header("authorization"), getCookie(c, SESSION_COOKIE));
    if (malformed) c.set("credentialRejected", true);
    else if (token) {
      const hash = tokenHash(token);
      // Stored only when looked up: a hit must not extend the entry's life, or a token in steady use would never be checked again.
      let authority = cache.get(hash);
      if (!authority) {
        authority = (await resolveCaller(c.get("db"), token, hash)) ?? undefined;
        if (authority) cache.set(hash, authority);
      }
      if (authority) {
        c.set("principal", authority.principal);
        c.set("authority", authority);
      } else c.set("credentialRejected", true);
    }
    await next();
  };
}

/**
 * Empties this instance's short-lived caches after a request that changed state, so its own changes (a
 * revoked token, a new grant, a logout, a new collection interval) apply to the next request at once.
 */
export function forgetOnWrite(caches: ReadonlyArray<{ clear(): void }>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (!READ_METHODS.has(c.req.method) && c.res.status < 400) for (const cache of caches) cache.clear();
  };
}
