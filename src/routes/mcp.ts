import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { USER, authority, declareAccess, requireAccess } from "../http/access.ts";
import { newRouter } from "../http/router.ts";
import { buildMcpServer } from "../mcp/server.ts";

export const MCP_PATH = "/mcp/v1";

/** MCP over Streamable HTTP, stateless: a server and a transport per request, JSON answers. */
export const mcpRoutes = newRouter();
mcpRoutes.post(MCP_PATH, requireAccess(declareAccess("POST", MCP_PATH, USER)), async (c) => {
  const server = buildMcpServer({ db: c.get("db"), now: Date.now(), access: await authority(c), config: c.get("config"), log: c.get("log") });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw);
  } finally {
    await server.close();
  }
});
