/** Cross-cutting middleware: dependencies into the context, one log line per request, the Link header. */
import type { Context, MiddlewareHandler } from "hono";
import type { AppDeps, AppEnv } from "./context.ts";
import type { HealthReport } from "../llm/health.ts";
import type { ModelInfo } from "../llm/models.ts";
import { Recently } from "../llm/recently.ts";
import { noteWrite } from "./read-db.ts";

/** How long the public LLM endpoints keep an answer. */
export const LLM_PUBLIC_ANSWER_MS = 30_000;

export const SERVICE_DESC_LINK = '</api/v1/openapi.json>; rel="service-desc"';

export function provideDeps(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const llmAnswers = { health: new Recently<HealthReport>(LLM_PUBLIC_ANSWER_MS), models: new Recently<ModelInfo[]>(LLM_PUBLIC_ANSWER_MS) };
  return async (c, next) => {
    c.set("llmAnswers", llmAnswers);
    c.set("config", deps.config);
    c.set("log", deps.log);
    c.set("transports", deps.transports ?? {});
    c.set("observeRequest", deps.observeRequest);
    c.set("docsAssets", deps.docsAssets);
    c.set("consoleAssets", deps.consoleAssets);
    c.set("clientAddress", deps.clientAddress?.(c) ?? "unknown");
    c.set("secureTransport", new URL(c.req.url).protocol === "https:" || (deps.forwardedHttps?.(c) ?? false));
    const db = deps.datastore.open();
    c.set("db", db);
    c.set("replicas", deps.datastore.replicas);
    try {
      await next();
      await noteWriteOf(c);
    } finally {
      const session = c.get("replicaSession");
      const released = Promise.all([session?.close(), deps.datastore.release?.(db)]);
      waitUntilOrAwait(c, released);
    }
  };
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** A caller's successful write sends their reads to the primary until the replicas have it (http/read-db.ts). */
async function noteWriteOf(c: Context<AppEnv>): Promise<void> {
  const principal = c.get("principal");
  const replicas = c.get("replicas");
  if (!replicas || !principal || SAFE_METHODS.has(c.req.method) || c.res.status >= 400 || c.get("wroteNothing")) return;
  await noteWrite(c, replicas, principal.userId);
}

/** On Workers, finish cleanup after the response; on Node there is no execution context. */
function waitUntilOrAwait(c: { executionCtx: { waitUntil(p: Promise<unknown>): void } }, work: Promise<unknown>) {
  try {
    c.executionCtx.waitUntil(work.catch(() => {}));
  } catch {
    void work.catch(() => {});
  }
}

export const requestLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = performance.now();
  await next();
  // The route pattern, not the path: ids would make every request a new series.
  const endpoint = c.req.matchedRoutes.filter((r) => r.method !== "ALL").at(-1)?.path ?? "unmatched";
  c.get("observeRequest")?.(c.req.method, endpoint, c.res.status, (performance.now() - started) / 1000);
  c.get("log").info("request", {
    request_id: c.get("requestId"),
    method: c.req.method,
    path: c.req.path,
    status: c.res.status,
    duration_ms: Math.round((performance.now() - started) * 10) / 10,
  });
};

export const serviceDescLink: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (c.res.headers.get("content-type")?.startsWith("application/json")) c.res.headers.set("Link", SERVICE_DESC_LINK);
};
