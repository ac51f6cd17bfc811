import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import { validationHook } from "./validation.ts";

/**
 * Every route module builds its routes on one of these, so validation errors look the same everywhere, and a
 * query parameter a route does not take is a 400 rather than ignored: a misspelt filter must not widen the
 * answer unnoticed.
 */
export function newRouter() {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const register = router.openapi;
  router.openapi = ((route, handler, hook) => register(withStrictQuery(route), handler, hook)) as typeof register;
  return router;
}

function withStrictQuery<R extends { request?: { query?: unknown } }>(route: R): R {
  const query = route.request?.query;
  if (!(query instanceof z.ZodObject)) return route;
  return { ...route, request: { ...route.request, query: query.strict() } };
}
