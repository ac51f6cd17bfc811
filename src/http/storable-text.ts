/**
 * PostgreSQL text cannot hold NUL characters: input carrying one gets a 400 naming where it is, before it
 * reaches the datastore as an encoding error.
 */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "./errors.ts";

/** The path (`a.b.0`) of the first string in `value` holding a NUL character, or null. */
export function nulPath(value: unknown, path: string[] = []): string | null {
  if (typeof value === "string") return value.includes("\0") ? path.join(".") || "(value)" : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], [...path, String(i)]);
      if (found) return found;
    }
  } else if (value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      const found = key.includes("\0") ? [...path, key].join(".") : nulPath(v, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

export const rejectNul: MiddlewareHandler = async (c, next) => {
  if (/%00/i.test(c.req.url)) throw new ApiError(400, "the request address contains a NUL character (%00), which cannot be stored");
  if (c.req.header("content-type")?.includes("json") && !["GET", "HEAD"].includes(c.req.method)) {
    const body = await c.req.json().catch(() => undefined); // malformed JSON is the validator's to report
    const at = nulPath(body);
    if (at) throw new ApiError(400, `body field \`${at}\`: contains a NUL character (\\u0000), which cannot be stored`);
  }
  return next();
};
