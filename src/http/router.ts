import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import { validationHook } from "./validation.ts";

/** Every route module builds its routes on one of these, so validation errors look the same everywhere. */
export function newRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
