import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { USER, authority, declareAccess, requireAccess } from "../http/access.ts";
import { newRouter } from "../http/router.ts";
import { ApiError } from "../http/errors.ts";
import type { AppEnv } from "../http/context.ts";
import type { Context } from "hono";
import { buildMcpServer } from "../mcp/server.ts";

export const MCP_PATH = "/mcp/v1";

/** MCP over Streamable HTTP, stateless: a server and a transport per request, JSON answers. */
export const mcpRoutes = newRouter();
/**
 * DNS rebinding: a page on another origin must not drive the MCP endpoint through a user's browser. Clients
 * that send no Origin (every non-browser client) pass; a browser's Origin must be ours or listed in
 * mcp.allowed_origins.
 */
function assertAllowedOrigin(c: Context<AppEnv>) {
  const origin = c.req.header("origin");
  if (!origin) return;
  const own = new URL(c.req.url).origin;
  if (origin === own || c.get("config").mcp.allowed_origins.includes(origin)) return;
  throw new ApiError(403, `origin ${origin} may not use the MCP endpoint; add it to mcp.allowed_origins (PGLENS_MCP_ALLOWED_ORIGINS) if it should`);
}

mcpRoutes.post(MCP_PATH, requireAccess(declareAccess("POST", MCP_PATH, USER)), async (c) => {
  assertAllowedOrigin(c);
  const server = buildMcpServer({ db: c.get("db"), now: Date.now(), access: await authority(c), config: c.get("config"), log: c.get("log") });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw);
  } finally {
    await server.close();
  }
});
