import { createRoute, z } from "@hono/zod-openapi";
import { DatastoreUnavailableError } from "../../drivers/errors.ts";
import type { Driver } from "../../drivers/types.ts";
import type { Logger } from "../log.ts";
import { PUBLIC, guarded } from "../http/access.ts";
import { newRouter } from "../http/router.ts";
import { VERSION } from "../version.ts";

const HEALTH_TIMEOUT_MS = 3000;

const DatastoreHealth = z.object({
  status: z.enum(["ok", "unavailable"]),
  driver: z.string().openapi({ example: "pglite" }),
  error: z.string().optional().openapi({ description: "Why the datastore is unavailable" }),
});
const Healthy = z.object({ status: z.literal("ok"), version: z.string(), datastore: DatastoreHealth }).openapi("Health");
const Unhealthy = z
  .object({ error: z.string(), status: z.literal("unavailable"), version: z.string(), datastore: DatastoreHealth })
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
  const problem = await datastoreProblem(db, c.get("log"));
  if (problem === null) return c.json({ status: "ok" as const, version: VERSION, datastore: { status: "ok" as const, driver: db.kind } }, 200);
  return c.json(
    {
      error: "datastore unavailable",
      status: "unavailable" as const,
      version: VERSION,
      datastore: { status: "unavailable" as const, driver: db.kind, error: problem },
    },
    503,
  );
});
