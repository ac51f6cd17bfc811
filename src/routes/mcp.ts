import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { USER, declareAccess, requireAccess } from "../http/access.ts";
import { toolContext } from "./tool-context.ts";
import { newRouter } from "../http/router.ts";
import { ApiError } from "../http/errors.ts";
import type { AppEnv } from "../http/context.ts";
import type { Context } from "hono";
import { buildMcpServer } from "../mcp/server.ts";

export const MCP_PATH = "/mcp/v1";

/** MCP over Streamable HTTP, stateless: a server and a transport per request, JSON answers. */
export const mcpRoutes = newRouter();
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * DNS rebinding: a page on another origin must not drive the MCP endpoint through a user's browser. Clients
 * that send no Origin (every non-browser client) pass; a browser's Origin must be public_url's origin or listed
 * in mcp.allowed_origins (without public_url: a loopback origin, as on a laptop). Never the request's Host: a
 * rebound name sends its own Host, which would always match.
 */
function assertAllowedOrigin(c: Context<AppEnv>) {
  const origin = c.req.header("origin");
  if (!origin) return;
  const config = c.get("config");
  if (config.mcp.allowed_origins.includes(origin)) return;
  if (config.public_url ? origin === new URL(config.public_url).origin : isLoopbackOrigin(origin)) return;
  throw new ApiError(
    403,
    `origin ${origin} may not use the MCP endpoint; set public_url (PGLENS_PUBLIC_URL) to where pglens is reached, or add the origin to mcp.allowed_origins (PGLENS_MCP_ALLOWED_ORIGINS)`,
  );
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

mcpRoutes.post(MCP_PATH, requireAccess(declareAccess("POST", MCP_PATH, USER)), async (c) => {
  assertAllowedOrigin(c);
  const server = buildMcpServer(await toolContext(c));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw);
  } finally {
    await server.close();
  }
});
