/**
 * Long-lived answers (event streams) outlive the moment their caller was authenticated. This looks the request's
 * credential up again, bypassing the caller cache, so a stream can end when a sign-out, expiry, revocation,
 * disabled user or changed grants mean the caller would no longer be let in.
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { resolveCaller } from "../auth/principal.ts";
import type { Authority } from "../auth/rbac.ts";
import { SESSION_COOKIE, presentedToken } from "./authenticate.ts";
import type { AppEnv } from "./context.ts";

export const CREDENTIAL_GONE = "your credential no longer holds (signed out, expired, revoked, or the user was disabled or locked): the stream is closed";

/**
 * A function answering the caller's current authority, or null when the credential no longer holds. It asks
 * the datastore at most once per `everyMs` (a stream of many small events checks about once a second).
 */
export function credentialCheck(c: Context<AppEnv>, everyMs = 1000): () => Promise<Authority | null> {
  const { token } = presentedToken(c.req.header("authorization"), getCookie(c, SESSION_COOKIE));
  const db = c.get("db");
  let checkedAt = -Infinity;
  let current: Authority | null = null;
  return async () => {
    if (!token) return null;
    if (Date.now() - checkedAt >= everyMs) {
      current = await resolveCaller(db, token);
      checkedAt = Date.now();
    }
    return current;
  };
}
