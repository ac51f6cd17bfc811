/**
 * The MCP server for one request (stateless, so it runs the same on Node and Workers): tools the caller may
 * not use are registered disabled (absent from tools/list, refused on call), and every call goes through
 * callTool, which checks again.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { mayUseTool } from "../auth/rbac.ts";
import type { Logger } from "../log.ts";
import { VERSION } from "../version.ts";
import { callTool } from "./call.ts";
import type { ToolContext } from "./tool.ts";
import { enabledTools } from "./tools/index.ts";

export function buildMcpServer(ctx: ToolContext & { log: Logger }): McpServer {
  const server = new McpServer(
    { name: "pglens", version: VERSION },
    { instructions: "PostgreSQL monitoring: collected statistics (list_probes, describe_probe, query_metrics) and read-only live access to monitored databases." },
  );
  for (const tool of enabledTools(ctx.config)) {
    const registered = server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: { title: tool.title, ...tool.annotations } },
      async (args: Record<string, unknown>) => (await callTool(tool.name, args, { ...ctx, now: Date.now() })) as { content: Array<{ type: "text"; text: string }>; isError: boolean },
    );
    if (!mayUseTool(ctx.access, tool.name)) registered.disable();
  }
  return server;
}
