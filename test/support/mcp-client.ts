/** The MCP SDK's own client, connected to /mcp/v1 of a running app (over HTTP, or any fetch function). */
import { fencedData } from "./fenced.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export async function mcpClient(baseUrl: string, token: string, fetchImpl?: (url: string, init?: RequestInit) => Promise<Response>): Promise<Client> {
  const client = new Client({ name: "pglens-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/v1`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    ...(fetchImpl ? { fetch: async (url: string | URL, init?: RequestInit) => fetchImpl(String(url), init) } : {}),
  });
  await client.connect(transport);
  return client;
}

export const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text ?? "";
/** The data of a tool result that pglens fences (src/mcp/fence.ts). */
export const dataOf = (result: unknown) => fencedData(textOf(result));
