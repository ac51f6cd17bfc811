/** Path parameter schemas shared by routes. */
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
