import { createRoute, z } from "@hono/zod-openapi";
import { DatastoreUnavailableError } from "../../drivers/errors.ts";
import type { Driver } from "../../drivers/types.ts";
import type { Logger } from "../log.ts";
import { PUBLIC, guarded } from "../http/access.ts";
import { newRouter } from "../http/router.ts";
import { replicaSession } from "../http/read-db.ts";
import { VERSION } from "../version.ts";

const HEALTH_TIMEOUT_MS = 3000;

const DatastoreHealth = z.object({
  status: z.enum(["ok", "unavailable"]),
  driver: z.string().openapi({ example: "pglite" }),
  error: z.string().optional().openapi({ description: "Why the datastore is unavailable" }),
});
const ReplicaHealth = z
  .object({
    replica: z.number().int().openapi({ description: "Position in datastore.read_urls, from 1" }),
    status: z.enum(["ok", "lagging", "down", "unchecked"]).openapi({ description: "ok: reads go there; lagging or down: skipped until it recovers" }),
    lag_seconds: z.number().nullable().openapi({ description: "Seconds behind the primary at the last check (0: replayed all it received)" }),
    error: z.string().optional(),
    checked_at: z.string().nullable(),
  })
  .openapi("ReplicaHealth");
const Replicas = z.array(ReplicaHealth).optional().openapi({ description: "Each read replica (datastore.read_urls), checked now; absent without replicas" });
const Healthy = z.object({ status: z.literal("ok"), version: z.string(), datastore: DatastoreHealth, replicas: Replicas }).openapi("Health");
const Unhealthy = z
  .object({ error: z.string(), status: z.literal("unavailable"), version: z.string(), datastore: DatastoreHealth, replicas: Replicas })
  .openapi("HealthUnavailable");

const route = guarded(
  PUBLIC,
  createRoute({
    method: "get",
    path: "/health",
    tags: ["Utilities"],
    summary: "Service health and datastore reachability (no authentication)",
    responses: {
      200: { description: "Healthy", content: { "application/json": { schema: Healthy } } },
      503: { description: "The datastore cannot be reached", content: { "application/json": { schema: Unhealthy } } },
    },
  }),
);

/** Null when the datastore answers within the timeout, else a reason fit for a public endpoint. */
async function datastoreProblem(db: Driver, log: Logger): Promise<string | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${HEALTH_TIMEOUT_MS / 1000} s`), HEALTH_TIMEOUT_MS);
  });
  const check = db.query("select 1").then(
    () => null,
    (err: Error) => {
      log.warn("health check failed", { error: err.message });
      return err instanceof DatastoreUnavailableError ? "cannot connect" : "query failed";
    },
  );
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes = newRouter().openapi(route, async (c) => {
  const db = c.get("db");
  const readReplicas = c.get("replicas");
  const [problem, replicas] = await Promise.all([datastoreProblem(db, c.get("log")), readReplicas && replicaSession(c, readReplicas).health()]);
  const replicaStates = replicas?.map(({ name: _hidden, ...state }, i) => ({ replica: i + 1, ...state }));
  if (problem === null)
    return c.json({ status: "ok" as const, version: VERSION, datastore: { status: "ok" as const, driver: db.kind }, replicas: replicaStates }, 200);
  return c.json(
    {
      error: "datastore unavailable",
      status: "unavailable" as const,
      version: VERSION,
      datastore: { status: "unavailable" as const, driver: db.kind, error: problem },
      replicas: replicaStates,
    },
    503,
  );
});
