/** Turns zod validation failures into 400s that name the parameter and what is wrong with it. */
import type { Context } from "hono";
import type { z } from "zod";

const WHERE: Record<string, string> = {
  query: "query parameter",
  param: "path parameter",
  json: "body field",
  header: "header",
  form: "form field",
  cookie: "cookie",
};

export function describeIssues(target: string, error: z.ZodError): string {
  const where = WHERE[target] ?? target;
  return error.issues
    .map((issue) => {
      const keys = issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
      return keys
        .map((path) => {
          const name = path.join(".");
          if (issue.code === "unrecognized_keys") return `unknown ${where} \`${name}\``;
          if (!name) return `${target === "json" ? "request body" : where}: ${issue.message}`;
          return `${where} \`${name}\`: ${issue.message}`;
        })
        .join("; ");
    })
    .join("; ");
}

export function validationHook(result: { success: boolean; error?: z.ZodError; target: string }, c: Context) {
  if (!result.success && result.error) return c.json({ error: describeIssues(result.target, result.error) }, 400);
}
