/** createApp(deps): the one Hono application, identical on Node and on Workers. */
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";
import { PUBLIC, accessOf, declareAccess } from "./http/access.ts";
import { allowedMethodsLookup } from "./http/allowed-methods.ts";
import { forgetOnWrite, identifyCaller } from "./http/authenticate.ts";
import { CallerCache } from "./auth/caller-cache.ts";
import type { MetricsContextCache } from "./queries/metrics-context.ts";
import { ExpiringCache } from "./expiring-cache.ts";
import type { AppDeps, AppEnv } from "./http/context.ts";
import { errorResponse, handleError } from "./http/errors.ts";
import { provideDeps, requestLog, serviceDescLink } from "./http/middleware.ts";
import { newRouter } from "./http/router.ts";
import { ROUTE_MODULES } from "./routes/index.ts";
import { VERSION } from "./version.ts";

export const OPENAPI_PATH = "/api/v1/openapi.json";

const documentConfig = {
  openapi: "3.0.3",
  info: {
    title: "pglens API",
    version: VERSION,
    license: { name: "MIT", url: "https://opensource.org/licenses/MIT" },
    description: "PostgreSQL monitoring: collected statistics history with reset-aware derived metrics, and live read-only tools.",
  },
  // In the order people need them: the data first, then the estate and its alerting, the assistants, the administration.
  tags: [
    { name: "Metrics", description: "Collected statistics over time, with derived rates and changes; summaries, top statements, latest samples" },
    { name: "Alerts", description: "Alerts raised by the alerter, their acknowledgment and history" },
    { name: "Server information", description: "What a monitored server is: version, settings, databases, extensions, its AI analysis" },
    { name: "Timeline", description: "Configuration changes, restarts, alerts and blackouts of the estate, in time order" },
    { name: "Connections", description: "The monitored servers: register, change, test and remove them" },
    { name: "Clusters", description: "Groups of servers that replicate to each other, found or declared" },
    { name: "Probe configuration", description: "Which probes run, and how often, per estate, group, cluster or server" },
    { name: "Alert rules", description: "Thresholds and anomaly rules, and their overrides per scope" },
    { name: "Blackouts", description: "Maintenance windows that silence alerts, one-off or on a schedule" },
    { name: "Notification channels", description: "Where alerts are sent (Slack, email, webhooks, ...) and what was delivered" },
    { name: "AI", description: "The estate overview and conversations with the assistant" },
    { name: "LLM", description: "The LLM proxy: providers, models, chat, embeddings" },
    { name: "Conversations", description: "Stored conversations with the assistant" },
    { name: "Memories", description: "What the assistant keeps between conversations" },
    { name: "MCP", description: "The tools assistants use, over MCP and as REST" },
    { name: "Authentication", description: "Signing in and out, the current user" },
    { name: "RBAC", description: "Users, groups, privileges and API tokens" },
    { name: "Utilities", description: "Health, version and this document" },
  ],
  // Relative: the document describes whichever server serves it.
  servers: [{ url: "/", description: "The pglens server that serves this document" }],
};

export function createApp(deps: AppDeps, modules: ReadonlyArray<ReturnType<typeof newRouter>> = ROUTE_MODULES) {
  const app = newRouter();
  app.use("*", requestId());
  // Refuse oversized bodies as they arrive, before anything (authentication included) reads them.
  app.use(
    "*",
    bodyLimit({
      maxSize: deps.config.max_body_bytes,
      onError: (c) => c.json({ error: `request body too large: at most ${deps.config.max_body_bytes} bytes (max_body_bytes)` }, 413),
    }),
  );
  app.use("*", provideDeps(deps));
  app.use("*", requestLog);
  const callers = new CallerCache(deps.config.auth.cache_seconds * 1000);
  const metricsContexts: MetricsContextCache = new ExpiringCache(deps.config.auth.cache_seconds * 1000);
  app.use("*", forgetOnWrite([callers, metricsContexts]));
  app.use("*", identifyCaller(callers));
  app.use("*", async (c, next) => {
    c.set("metricsContexts", metricsContexts);
    await next();
  });
  app.use("*", serviceDescLink);
  app.use("*", secureHeaders({ crossOriginResourcePolicy: false, strictTransportSecurity: false }));

  for (const module of modules) app.route("/", module);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A session token from POST /api/v1/auth/login or an API token",
  });
  // Public: it describes the API and holds no data; client generators and API explorers fetch it without credentials.
  declareAccess("GET", OPENAPI_PATH, PUBLIC);
  app.doc(OPENAPI_PATH, documentConfig);
  assertEveryRouteDecided(app.routes);

  const allowedMethods = allowedMethodsLookup(app.routes);
  app.notFound((c: Context<AppEnv>) => {
    const allowed = allowedMethods(c.req.path);
    if (allowed.length === 0) return errorResponse(c, 404, `no such endpoint: ${c.req.method} ${c.req.path}`);
    const allow = allowed.join(", ");
    if (c.req.method === "OPTIONS") return c.body(null, 204, { Allow: allow });
    return errorResponse(c, 405, `method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow}`, { Allow: allow });
  });
  app.onError(handleError);
  return app;
}

export type App = ReturnType<typeof createApp>;

/** No route may exist without a statement of who may call it (http/access.ts). */
function assertEveryRouteDecided(routes: ReadonlyArray<{ method: string; path: string }>) {
  const undecided = routes.filter((r) => r.method !== "ALL" && !accessOf(r.method, r.path)).map((r) => `${r.method} ${r.path}`);
  if (undecided.length) throw new Error(`routes without an access decision: ${undecided.join(", ")}`);
}

/** The OpenAPI document exactly as served at /api/v1/openapi.json. */
export function openApiDocument(app: App) {
  return app.getOpenAPIDocument(documentConfig);
}
