/**
 * The console's safety by construction: a strict Content-Security-Policy on every page (scripts, styles and
 * requests only to pglens itself, no inline script), and a CSRF check on every form post (sameOrigin). A session
 * cookie is HttpOnly and SameSite=Lax besides.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/context.ts";

const CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const pageHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  c.header("Content-Security-Policy", CSP);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
};

/**
 * Whether a form post comes from a page pglens served. Browsers say so in Sec-Fetch-Site, which pages cannot
 * set; without it (older browsers), the Origin must be pglens's own. Chromium sends `Origin: null` on some
 * same-origin form posts, so Origin alone would refuse honest users.
 */
export function sameOrigin(c: Context<AppEnv>): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site) return site === "same-origin";
  const origin = c.req.header("origin");
  if (!origin || origin === "null") return false;
  const own = c.get("config").public_url ? new URL(c.get("config").public_url!).origin : new URL(c.req.url).origin;
  return origin === own;
}

/** A path of this site to go to after signing in: never another host (`//evil`, `https://...`). */
export const localPath = (next: string | undefined) => (next?.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/");

/** Form fields PostgreSQL cannot store (a NUL character): such a post is refused rather than half-handled. */
export const hasNul = (form: Record<string, unknown>) => Object.values(form).some((v) => typeof v === "string" && v.includes("\u0000"));
