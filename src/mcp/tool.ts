/** The shape of a pglens tool: defined once, served by /mcp/v1 and by the REST bridge alike. */
import type { z } from "zod";
import type { Driver } from "../../drivers/types.ts";
import type { Authority } from "../auth/rbac.ts";
import type { BuiltinTool, Config } from "../config.ts";
import type { Logger } from "../log.ts";

export interface ToolContext {
  db: Driver;
  /** For reads of samples, alerts and the estate: a read replica where there is one (http/read-db.ts). */
  readDb: Driver;
  /** Told before a tool that writes runs. */
  wrote?: () => void;
  now: number;
  /** The caller's rights: tools check connections against them. */
  access: Authority;
  config: Config;
  log: Logger;
}

export interface ToolDefinition<Schema extends z.ZodObject = z.ZodObject> {
  name: BuiltinTool;
  title: string;
  description: string;
  inputSchema: Schema;
  /** MCP annotations: every tool so far only reads. */
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  run(args: z.infer<Schema>, ctx: ToolContext): Promise<string>;
  /**
   * Where the result's text comes from, when people outside pglens's control may have written some of it: the
   * result is then fenced as data (fence.ts). The live tools fence their own results.
   */
  dataFrom?: string;
}

/** A failure the caller can act on: returned as an error result with this message. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}

/**
 * Arguments the schema does not name are refused, as its JSON Schema tells clients (additionalProperties: false),
 * not dropped: a misspelt filter (`databse_name`) would otherwise widen the answer to every entity unnoticed.
 */
export function defineTool<Schema extends z.ZodObject>(tool: ToolDefinition<Schema>): ToolDefinition<Schema> {
  return { ...tool, inputSchema: tool.inputSchema.strict() as unknown as Schema };
}
