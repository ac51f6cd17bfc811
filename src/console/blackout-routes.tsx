/**
 * The blackouts page and its two forms: start a window on a server now, stop an active one early. The API's rules
 * apply (manage_blackouts, and read on every server the window would silence), from a pglens page only.
 */
import type { Context } from "hono";
import { assertMayPlace, visibleEstate } from "../http/blackout-access.ts";
import { nextStarts, parseSchedule } from "../blackouts/cron.ts";
import { checkScope } from "../blackouts/scope.ts";
import { hasAdminPermission } from "../auth/rbac.ts";
import { createBlackout, getBlackout, listBlackouts, listSchedules, stopBlackout } from "../datastore/blackouts.ts";
import { ForbiddenError, InputError, NotFoundError } from "../errors.ts";
import { PUBLIC, declareAccess } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { ApiError } from "../http/errors.ts";
import { estateView } from "../http/estate-view.ts";
import { newRouter } from "../http/router.ts";
import { BlackoutPage, DURATIONS_MINUTES } from "./blackout-page.tsx";
import { crossSite, signIn } from "./page-answers.ts";
import { hasNul, pageHeaders, sameOrigin } from "./protect.ts";

export const blackoutPageRoutes = newRouter();
for (const [method, path] of [
  ["GET", "/blackouts"],
  ["POST", "/blackouts"],
  ["POST", "/blackouts/:id/stop"],
] as const)
  declareAccess(method, path, PUBLIC);
for (const path of ["/blackouts", "/blackouts/*"]) blackoutPageRoutes.use(path, pageHeaders);

/** The page, with an error above it when a form was refused (the status says why, as in the API). */
async function page(c: Context<AppEnv>, error?: { message: string; status: 400 | 403 | 404 }) {
  const { a, connections } = await estateView(c);
  const db = c.get("db");
  const visible = await visibleEstate(c);
  const now = Date.now();
  const [{ blackouts }, { schedules }] = await Promise.all([
    listBlackouts(db, { notEnded: true, limit: 200, offset: 0 }, visible),
    listSchedules(db, { limit: 200, offset: 0 }, visible),
  ]);
  const next = (s: (typeof schedules)[number]) => {
    try {
      return nextStarts(parseSchedule(s.cron_expression, s.timezone), 1, new Date(now))[0] ?? null;
    } catch {
      return null; // a schedule stored before a check tightened: shown without a next start
    }
  };
  const v = {
    windows: blackouts.sort((x, y) => x.start_time.getTime() - y.start_time.getTime()),
    schedules: schedules.map((s) => ({ ...s, next: next(s) })),
    servers: connections.map((row) => ({ id: row.id, name: row.name })),
    mayManage: hasAdminPermission(a, "manage_blackouts"),
    now,
    error: error?.message,
  };
  return c.html(<BlackoutPage user={c.get("principal")!.username} v={v} />, error?.status ?? 200);
}

/** The API's refusals, as the page shows them. */
function refusal(err: unknown): { message: string; status: 400 | 403 | 404 } {
  if (err instanceof NotFoundError) return { message: err.message, status: 404 };
  if (err instanceof InputError) return { message: err.message, status: 400 };
  if (err instanceof ForbiddenError) return { message: err.message, status: 403 };
  if (err instanceof ApiError && [400, 403, 404].includes(err.status)) return { message: err.message, status: err.status as 400 | 403 | 404 };
  throw err;
}

blackoutPageRoutes.get("/blackouts", (c) => (c.get("principal") ? page(c) : signIn(c)));

/** The shared start of both forms: from a pglens page, signed in, with manage_blackouts; the form's fields. */
async function formOf(c: Context<AppEnv>) {
  if (!sameOrigin(c)) return { answer: crossSite(c) };
  if (!c.get("principal")) return { answer: signIn(c) };
  const { a } = await estateView(c);
  if (!hasAdminPermission(a, "manage_blackouts"))
    return { answer: await page(c, { message: "starting or stopping a maintenance window needs the manage_blackouts permission", status: 403 }) };
  const form = await c.req.parseBody();
  if (hasNul(form)) return { answer: await page(c, { message: "the form held a character pglens cannot store (NUL)", status: 400 }) };
  const text = (name: string) => (typeof form[name] === "string" ? (form[name] as string).trim() : "");
  return { text };
}

blackoutPageRoutes.post("/blackouts", async (c) => {
  const { answer, text } = await formOf(c);
  if (answer) return answer;
  try {
    const id = text("connection_id");
    const minutes = Number(text("minutes"));
    if (!/^\d{1,9}$/.test(id)) throw new InputError("choose a server");
    if (!(DURATIONS_MINUTES as readonly number[]).includes(minutes)) throw new InputError(`choose a duration of ${DURATIONS_MINUTES.join(", ")} minutes`);
    if (!text("reason")) throw new InputError("give a reason: it shows on the timeline and in the overview");
    const target = checkScope({ scope: "server", connection_id: Number(id), database_name: text("database_name") || null });
    await assertMayPlace(c, target);
    const start = new Date();
    await createBlackout(c.get("db"), {
      ...target,
      reason: text("reason").slice(0, 500),
      start_time: start,
      end_time: new Date(start.getTime() + minutes * 60_000),
      created_by: c.get("principal")!.username,
    });
  } catch (err) {
    return page(c, refusal(err));
  }
  return c.redirect("/blackouts", 303);
});

blackoutPageRoutes.post("/blackouts/:id/stop", async (c) => {
  const { answer } = await formOf(c);
  if (answer) return answer;
  try {
    const id = c.req.param("id");
    if (!/^\d{1,9}$/.test(id)) throw new NotFoundError(`blackout ${id} not found`);
    await assertMayPlace(c, await getBlackout(c.get("db"), Number(id), await visibleEstate(c)));
    if (!(await stopBlackout(c.get("db"), Number(id)))) throw new NotFoundError(`blackout ${id} is not active`);
  } catch (err) {
    return page(c, refusal(err));
  }
  return c.redirect("/blackouts", 303);
});
