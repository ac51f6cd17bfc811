/** The console's two common answers: to a browser without a session, and to a form posted from another site. */
import type { Context } from "hono";
import type { AppEnv } from "../http/context.ts";

export const signIn = (c: Context<AppEnv>) => c.redirect(`/sign-in?next=${encodeURIComponent(new URL(c.req.url).pathname)}`, 303);
export const crossSite = (c: Context<AppEnv>) => c.text("refused: this form was not sent from a pglens page (cross-site request)", 403);
