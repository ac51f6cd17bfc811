/** Runs a tool by name with the same checks everywhere: enabled, arguments valid, errors as readable results. */
import { z } from "zod";
import { mayUseTool } from "../auth/rbac.ts";
import { isToolEnabled } from "../config.ts";
import { ForbiddenError, InputError, NotFoundError } from "../errors.ts";
import { describeIssues } from "../http/validation.ts";
import { nulPath } from "../http/storable-text.ts";
import { MonitoredServerError } from "../monitored/client.ts";
import { fence } from "./fence.ts";
import { type ToolContext, ToolError } from "./tool.ts";
import { TOOLS } from "./tools/index.ts";

export interface ToolResult {
  content: Array<{ type: "text"; text: string }>;
  isError: boolean;
}

const text = (t: string, isError = false): ToolResult => ({ content: [{ type: "text", text: t }], isError });

export async function callTool(name: string, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) return text(`unknown tool \`${name}\`; GET /api/v1/mcp/tools lists the tools`, true);
  if (!isToolEnabled(ctx.config, tool.name)) return text(`tool \`${name}\` is disabled by configuration (builtins.tools.${name})`, true);
  if (!mayUseTool(ctx.access, tool.name)) return text(`access denied: you may not use the tool \`${name}\``, true);
  const nul = nulPath(args);
  if (nul) return text(`invalid arguments for ${name}: argument \`${nul}\` contains a NUL character, which cannot be stored or sent`, true);
  const parsed = tool.inputSchema.safeParse(args ?? {});
  if (!parsed.success) return text(`invalid arguments for ${name}: ${describeIssues("argument", parsed.error)}`, true);
  if (!tool.annotations.readOnlyHint) ctx.wrote?.();
  try {
    const result = await tool.run(parsed.data, ctx);
    return text(tool.dataFrom ? fence(`Result of ${tool.name}.`, result, "", tool.dataFrom) : result);
  } catch (err) {
    if (
      err instanceof ToolError ||
      err instanceof InputError ||
      err instanceof NotFoundError ||
      err instanceof ForbiddenError ||
      err instanceof MonitoredServerError
    )
      return text((err as Error).message, true);
    throw err; // datastore outages and bugs reach the caller's error handling
  }
}

/** The JSON Schema of a tool's arguments, as MCP clients expect it. */
export function inputJsonSchema(tool: { inputSchema: z.ZodObject }): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.inputSchema) as Record<string, unknown>;
  return schema;
}
