/** OpenAPI schemas shared by many routes. */
import { z } from "@hono/zod-openapi";

export const ErrorSchema = z.object({ error: z.string().openapi({ example: "query parameter `buckets`: expected an integer" }) }).openapi("Error");

// OpenAPI 3.0 (SPEC) has no null type, and a `nullable` needs a `type` beside it; the generator would emit a bare
// `{nullable: true}` for null and unknown values, so these schemas spell out where null is allowed.
const NULLABLE_TEXT = { type: "string", nullable: true } as const;

/** A scalar JSON value or null. */
export const ScalarOrNull = z
  .union([z.string(), z.number(), z.boolean()])
  .nullable()
  .openapi({ anyOf: [NULLABLE_TEXT, { type: "number" }, { type: "boolean" }] });

/** Any JSON value. */
export const JsonValue = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.string(), z.number(), z.boolean()])
  .nullable()
  .openapi({ anyOf: [{ type: "object" }, { type: "array", items: {} }, NULLABLE_TEXT, { type: "number" }, { type: "boolean" }] });

/** Standard error responses for a route's `responses` map. */
export function errorResponses<S extends 400 | 401 | 403 | 404 | 409 | 429 | 502 | 503 | 504>(...statuses: S[]) {
  const text: Record<number, string> = {
    400: "Invalid request",
    401: "Missing or invalid token",
    403: "Insufficient privileges",
    404: "Not found",
    409: "Conflict with an existing resource",
    429: "Too many requests",
    502: "The upstream provider failed (its status and message, never its key)",
    503: "Datastore unavailable",
    504: "The upstream provider did not answer in time",
  };
  return Object.fromEntries(statuses.map((s) => [s, { description: text[s], content: { "application/json": { schema: ErrorSchema } } }])) as Record<
    S,
    { description: string; content: { "application/json": { schema: typeof ErrorSchema } } }
  >;
}
