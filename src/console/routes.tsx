/**
 * The web console's routes: plain pages, not API operations (they stay out of the OpenAPI document). Pages
 * decide themselves who may see them: without a session they send the browser to sign in. The console reads
 * the datastore through the same domain code and rights as the API.
 */
import type { Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { login } from "../auth/login.ts";
import { acknowledgeAlert, listAlerts, unacknowledgeAlert } from "../datastore/alerts.ts";
import { mayChangeAlert, visibleAlert } from "../http/alert-access.ts";
import { deleteSession } from "../datastore/sessions.ts";
import { PUBLIC, declareAccess } from "../http/access.ts";
import { SESSION_COOKIE } from "../http/authenticate.ts";
import type { AppEnv } from "../http/context.ts";
import { estateView } from "../http/estate-view.ts";
import { newRouter } from "../http/router.ts";
import { defaultProvider } from "../llm/providers.ts";
import { alertHistory } from "./alert-history.ts";
import { ALERT_STATUSES, type AlertListFilters, AlertListPage, AlertPage, NotFoundPage } from "./alert-pages.tsx";
import { CONSOLE_ASSETS, CONSOLE_ASSET_PATH, type ConsoleAssetName } from "./assets.ts";
import { EstatePage } from "./estate-page.tsx";
import { estateRows } from "./estate-rows.ts";
import { ServerPage } from "./server-page.tsx";
import { serverView } from "./server-view.ts";
import { CONSOLE_CSS, STYLESHEET } from "./page.tsx";
import { crossSite, signIn } from "./page-answers.ts";
import { hasNul, localPath, pageHeaders, sameOrigin } from "./protect.ts";
import { SignInPage } from "./sign-in.tsx";

export const consoleRoutes = newRouter();
const PAGES = [
  ["GET", "/"],
  ["GET", "/sign-in"],
  ["POST", "/sign-in"],
  ["POST", "/sign-out"],
  ["GET", "/alerts"],
  ["GET", "/alerts/:id"],
  ["GET", "/servers/:id"],
  ["GET", STYLESHEET],
  ["GET", `${CONSOLE_ASSET_PATH}/:file`],
] as const;
for (const [method, path] of PAGES) declareAccess(method, path, PUBLIC); // pages check the session themselves, and send the browser to sign in
for (const path of ["/", "/sign-in", "/sign-out", "/alerts", "/alerts/*", "/servers/*"]) consoleRoutes.use(path, pageHeaders);

consoleRoutes.get(STYLESHEET, (c) => c.body(CONSOLE_CSS, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "max-age=3600" }));
consoleRoutes.get(`${CONSOLE_ASSET_PATH}/:file`, async (c) => {
  const file = c.req.param("file");
  const load = c.get("consoleAssets");
  if (!Object.hasOwn(CONSOLE_ASSETS, file) || !load) return c.text(`no such console file: ${file}`, 404);
  const name = file as ConsoleAssetName;
  return c.body((await load())[name], 200, { "content-type": CONSOLE_ASSETS[name].type, "cache-control": "max-age=3600", "x-content-type-options": "nosniff" });
});

consoleRoutes.get("/", async (c) => {
  const principal = c.get("principal");
  if (!principal) return signIn(c);
  const { a, connections } = await estateView(c);
  const rows = await estateRows(c.get("db"), a, connections);
  const llm = c.get("config").llm;
  return c.html(<EstatePage user={principal.username} rows={rows} llm={llm.overview_summary && defaultProvider(llm, "chat") !== undefined} now={Date.now()} />);
});

consoleRoutes.get("/servers/:id", async (c) => {
  const principal = c.get("principal");
  if (!principal) return signIn(c);
  const param = c.req.param("id");
  const { a, connections } = await estateView(c);
  const conn = /^\d{1,9}$/.test(param) ? connections.find((row) => row.id === Number(param)) : undefined;
  if (!conn) return c.html(<NotFoundPage user={principal.username} what={`Server ${param} was not found among the servers you can see.`} />, 404);
  const view = await serverView(
    c.get("db"),
    a,
    conn,
    { range: c.req.query("range"), from: c.req.query("from"), to: c.req.query("to") },
    c.req.query("by") === "database",
  );
  return c.html(<ServerPage user={principal.username} v={view} />);
});

consoleRoutes.get("/sign-in", (c) => c.html(<SignInPage next={localPath(c.req.query("next"))} />));

consoleRoutes.post("/sign-in", async (c) => {
  if (!sameOrigin(c)) return crossSite(c);
  const form = await c.req.parseBody();
  if (hasNul(form)) return c.html(<SignInPage next="/" error="The form held a character pglens cannot store (NUL)." />, 400);
  const next = localPath(typeof form.next === "string" ? form.next : undefined);
  const username = typeof form.username === "string" ? form.username : "";
  const password = typeof form.password === "string" ? form.password : "";
  const outcome = await login(c.get("db"), c.get("config"), c.get("log"), { username, password, clientAddress: c.get("clientAddress") });
  if (!outcome.ok) {
    const error = outcome.reason === "throttled" ? "Too many failed sign-ins; try again later." : "Invalid username or password.";
    return c.html(<SignInPage next={next} error={error} />, outcome.reason === "throttled" ? 429 : 401);
  }
  setCookie(c, SESSION_COOKIE, outcome.token, { httpOnly: true, sameSite: "Lax", path: "/", secure: c.get("secureTransport"), expires: outcome.expiresAt });
  return c.redirect(next, 303);
});

consoleRoutes.post("/sign-out", async (c) => {
  if (!sameOrigin(c)) return crossSite(c);
  const principal = c.get("principal");
  if (principal?.via === "session") await deleteSession(c.get("db"), principal.tokenHash);
  deleteCookie(c, SESSION_COOKIE, { path: "/" });
  return c.redirect("/sign-in", 303);
});

const WEEK_MS = 7 * 86_400_000;

consoleRoutes.get("/alerts", async (c) => {
  const principal = c.get("principal");
  if (!principal) return signIn(c);
  const servers = (await estateView(c)).connections;
  const q = c.req.query();
  const filters: AlertListFilters = {
    status: (ALERT_STATUSES as readonly string[]).includes(q.status ?? "") ? (q.status as AlertListFilters["status"]) : "open",
    severity: ["critical", "warning", "info"].includes(q.severity ?? "") ? q.severity! : "",
    server: servers.some((row) => String(row.id) === q.server) ? q.server! : "",
  };
  const { alerts } = await listAlerts(c.get("db"), {
    connectionIds: filters.server ? [Number(filters.server)] : servers.map((row) => row.id),
    excludeCleared: filters.status === "open",
    status: ["active", "acknowledged", "cleared"].includes(filters.status) ? filters.status : undefined,
    startTime: filters.status === "cleared" || filters.status === "all" ? new Date(Date.now() - WEEK_MS) : undefined,
    severity: filters.severity || undefined,
    limit: 200,
    offset: 0,
  });
  const shown = alerts.filter((a) => a.status !== "pending"); // not yet an alert: its condition must hold a while first
  return c.html(<AlertListPage user={principal.username} alerts={shown as never} filters={filters} servers={servers} />);
});

/** The alert the path names, when the user may see it; otherwise the answer to send. */
async function alertOf(c: Context<AppEnv>) {
  const principal = c.get("principal")!;
  const param = c.req.param("id") ?? "";
  const alert = /^\d{1,18}$/.test(param) ? await visibleAlert(c, Number(param)).catch(() => undefined) : undefined;
  // An alert on a server the user cannot read does not exist for them, as in the API.
  if (!alert) return { missing: c.html(<NotFoundPage user={principal.username} what={`Alert ${param} was not found on the servers you can see.`} />, 404) };
  return { alert };
}

consoleRoutes.get("/alerts/:id", async (c) => {
  const principal = c.get("principal");
  if (!principal) return signIn(c);
  const { alert, missing } = await alertOf(c);
  if (!alert) return missing;
  const history = await alertHistory(c.get("db"), alert);
  return c.html(<AlertPage user={principal.username} alert={alert as never} mayChange={await mayChangeAlert(c, alert)} history={history} />);
});

/** Acknowledging and taking it back: the API's rules (read_write on the alert's server), from a pglens page only. */
for (const action of ["acknowledge", "unacknowledge"] as const) {
  declareAccess("POST", `/alerts/:id/${action}`, PUBLIC);
  consoleRoutes.use(`/alerts/:id/${action}`, pageHeaders);
  consoleRoutes.post(`/alerts/:id/${action}`, async (c) => {
    if (!sameOrigin(c)) return crossSite(c);
    const principal = c.get("principal");
    if (!principal) return signIn(c);
    const { alert, missing } = await alertOf(c);
    if (!alert) return missing;
    if (!(await mayChangeAlert(c, alert))) return c.text(`refused: changing alert ${alert.id} needs read_write on its server`, 403);
    const form = await c.req.parseBody();
    if (hasNul(form)) return c.text("refused: the note holds a character pglens cannot store (NUL)", 400);
    const done =
      action === "acknowledge"
        ? acknowledgeAlert(
            c.get("db"),
            alert.id,
            principal.username,
            typeof form.message === "string" ? form.message.slice(0, 2000) : "",
            form.false_positive === "true",
          )
        : unacknowledgeAlert(c.get("db"), alert.id);
    await done.catch((err: Error) => {
      if (err.name !== "ConflictError") throw err; // someone else was quicker: the page shows how it stands
    });
    return c.redirect(`/alerts/${alert.id}`, 303);
  });
}
