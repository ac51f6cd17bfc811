import { createRoute, z } from "@hono/zod-openapi";
import { admin, guarded } from "../http/access.ts";
import { json } from "../http/params.ts";
import { newRouter } from "../http/router.ts";
import { errorResponses } from "../http/schemas.ts";
import { listMcpPrivileges } from "../datastore/groups.ts";

const McpPrivilege = z
  .object({ id: z.number().int(), identifier: z.string(), item_type: z.enum(["tool", "resource", "prompt"]), description: z.string(), is_public: z.boolean() })
  .openapi("McpPrivilege");

const route = guarded(
  admin("manage_permissions"),
  createRoute({
    method: "get",
    path: "/api/v1/rbac/privileges/mcp",
    tags: ["RBAC"],
    summary: "Every MCP item that can be granted (besides `*`, all of them)",
    responses: { 200: json(z.object({ mcp_privileges: z.array(McpPrivilege) }), "MCP items"), ...errorResponses(401, 403) },
  }),
);

export const rbacPrivilegeRoutes = newRouter().openapi(route, async (c) =>
  c.json(
    {
      mcp_privileges: await listMcpPrivileges(c.get("db")),
    },
    200,
  ),
);
