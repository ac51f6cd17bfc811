/** What a tool runs with in a request (MCP and the REST bridge alike). */
import type { Context } from "hono";
import type { ToolContext } from "../mcp/tool.ts";
import { authority } from "../http/access.ts";
import type { AppEnv } from "../http/context.ts";
import { readDb } from "../http/read-db.ts";

/**
 * The request counts as a read (its caller's later reads may go to a replica) unless a tool that writes runs:
 * MCP calls are POSTs whatever the tool does.
 */
export async function toolContext(c: Context<AppEnv>): Promise<ToolContext> {
  c.set("wroteNothing", true);
  return {
    db: c.get("db"),
    readDb: readDb(c),
    wrote: () => c.set("wroteNothing", false),
    now: Date.now(),
    access: await authority(c),
    config: c.get("config"),
    log: c.get("log"),
  };
}
