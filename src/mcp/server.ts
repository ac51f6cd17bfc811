/**
 * The MCP server for one request (stateless, so it runs the same on Node and Workers): tools the caller may
 * not use are registered disabled (absent from tools/list, refused on call), and every call goes through
 * callTool, which checks again.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { mayUseTool } from "../auth/rbac.ts";
import { VERSION } from "../version.ts";
import { callTool } from "./call.ts";
import type { ToolContext } from "./tool.ts";
import { enabledTools } from "./tools/index.ts";

const INSTRUCTIONS =
  "PostgreSQL monitoring: find servers with list_connections, then collected statistics (list_probes, describe_probe, query_metrics), alerts " +
  "(list_alerts, get_alert_rules), maintenance windows (list_blackouts), what happened when (get_timeline), and read-only live access to monitored databases.";

/** For a caller who may use no tool: why, and how an administrator changes that. */
const noToolsInstructions = (username: string) =>
  `pglens offers you no tools: ${username} holds no MCP privileges (or its token's scope allows none). An administrator grants them ` +
  `to a group you belong to, e.g. \`pglens group grant assistants --member ${username} --mcp '*' --connections 0:read\` on the server, ` +
  `or PUT /api/v1/rbac/groups/{id}/privileges/mcp with {"mcp_privileges":["*"]}; then reconnect.`;

export function buildMcpServer(ctx: ToolContext): McpServer {
  const tools = enabledTools(ctx.config);
  const usable = tools.some((t) => mayUseTool(ctx.access, t.name));
  const server = new McpServer(
    { name: "pglens", version: VERSION },
    { instructions: usable ? INSTRUCTIONS : noToolsInstructions(ctx.access.principal.username) },
  );
  for (const tool of tools) {
    const registered = server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: { title: tool.title, ...tool.annotations } },
      async (args: Record<string, unknown>) =>
        (await callTool(tool.name, args, { ...ctx, now: Date.now() })) as { content: Array<{ type: "text"; text: string }>; isError: boolean },
    );
    if (!mayUseTool(ctx.access, tool.name)) registered.disable();
  }
  return server;
}
