/** Path and query parameter schemas shared by routes. */
import { z } from "@hono/zod-openapi";

/** Ids are PostgreSQL `integer`s: anything larger can name no row. */
export const INT_MAX = 2_147_483_647;

/** An id in a JSON body. */
export const Id = z.number().int().positive().max(INT_MAX);

/** An id in a path or query string: plain digits only (" 1" or "1e0" name nothing), within integer range. */
export const PathId = z.preprocess((v) => (typeof v === "string" && /^\d{1,10}$/.test(v) ? Number(v) : v), Id);

export const IdParam = z.object({ id: PathId.openapi({ param: { name: "id", in: "path" }, example: 1 }) });

export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

export const jsonBody = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });

export const noContent = { 204: { description: "Done" } } as const;

/*
 * Query parameters arrive as text; these declare them in the OpenAPI document as what they mean (booleans,
 * integers, integer arrays), so generated clients take numbers and booleans, while the handlers keep parsing the
 * text with their own messages.
 */

/** A yes/no query parameter: true/false (or 1/0) on the wire, a boolean to the handler. */
export const queryFlag = (description: string) =>
  z
    .enum(["true", "false", "1", "0"])
    .transform((v) => v === "true" || v === "1")
    .optional()
    .openapi({ type: "boolean", description });

/** Connection ids in a query string: the parameter repeated, or ids separated by commas; the handler parses them. */
export const queryIds = (description: string, error?: string) =>
  z
    .custom<string | string[]>((v) => typeof v === "string" || (Array.isArray(v) && v.every((s) => typeof s === "string")), error ? { error } : undefined)
    .openapi({ type: "array", items: { type: "integer", minimum: 1 }, description, example: [1] });

/** An integer query parameter the handler checks with its own message. */
export const queryInteger = (description: string) => z.string().optional().openapi({ type: "integer", description });
