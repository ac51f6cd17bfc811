/** Path parameter schemas shared by routes. */
import { z } from "@hono/zod-openapi";

export const IdParam = z.object({ id: z.coerce.number().int().positive().openapi({ param: { name: "id", in: "path" }, example: 1 }) });

export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

export const jsonBody = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });

export const noContent = { 204: { description: "Done" } } as const;
