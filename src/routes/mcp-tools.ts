import { createRoute, z } from "@hono/zod-openapi";
import { JsonValue, errorResponses } from "../http/schemas.ts";
import { mayUseTool } from "../auth/rbac.ts";
import { USER, authority, guarded } from "../http/access.ts";
import { toolContext } from "./tool-context.ts";
import { newRouter } from "../http/router.ts";
import { callTool, inputJsonSchema } from "../mcp/call.ts";
import { enabledTools } from "../mcp/tools/index.ts";

const ToolInfo = z
  .object({
    name: z.string(),
    title: z.string(),
    description: z.string(),
    inputSchema: z.record(z.string(), JsonValue).openapi({ description: "JSON Schema of the arguments" }),
    annotations: z.object({
      readOnlyHint: z.boolean(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    }),
  })
  .openapi("ToolInfo");

const ToolResult = z
  .object({
    content: z.array(z.object({ type: z.literal("text"), text: z.string() })),
    isError: z.boolean(),
  })
  .openapi("ToolResult");

const listRoute = guarded(
  USER,
  createRoute({
    method: "get",
    path: "/api/v1/mcp/tools",
    tags: ["MCP"],
    summary: "Tools the caller can use",
    responses: {
      200: { description: "The tools", content: { "application/json": { schema: z.object({ tools: z.array(ToolInfo) }) } } },
      ...errorResponses(401),
    },
  }),
);

const callRoute = guarded(
  USER,
  createRoute({
    method: "post",
    path: "/api/v1/mcp/tools/call",
    tags: ["MCP"],
    summary: "Run a tool; its result is TSV text, or an error result the caller can read",
    request: {
      body: {
        required: true,
        content: {
          "application/json": {
            schema: z.object({
              name: z.string().min(1).openapi({ example: "list_probes" }),
              arguments: z.record(z.string(), JsonValue).optional(),
            }),
          },
        },
      },
    },
    responses: {
      200: { description: "The tool's result (isError marks a refusal)", content: { "application/json": { schema: ToolResult } } },
      ...errorResponses(400, 401, 503),
    },
  }),
);

export const mcpToolRoutes = newRouter()
  .openapi(listRoute, async (c) => {
    const a = await authority(c);
    return c.json(
      {
        tools: enabledTools(c.get("config"))
          .filter((t) => mayUseTool(a, t.name))
          .map((t) => ({
            name: t.name,
            title: t.title,
            description: t.description,
            inputSchema: inputJsonSchema(t) as Record<string, z.infer<typeof JsonValue>>, // a JSON Schema is JSON
            annotations: t.annotations,
          })),
      },
      200,
    );
  })
  .openapi(callRoute, async (c) => {
    const { name, arguments: args } = c.req.valid("json");
    return c.json(await callTool(name, args, await toolContext(c)), 200);
  });
