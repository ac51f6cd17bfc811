import { z } from "zod";
import { MAX_MEMORY_LENGTH, rememberMemory } from "../../ai/memories.ts";
import { hasAdminPermission } from "../../auth/rbac.ts";
import { MEMORY_SCOPES } from "../../datastore/memories.ts";
import { ToolError, defineTool } from "../tool.ts";

export const storeMemoryTool = defineTool({
  name: "store_memory",
  title: "Remember a fact",
  description:
    "Stores a fact, preference or decision to remember in later chats, under a category (e.g. preference, schema, incident). " +
    "scope `user` (default) is yours alone; `system` is everyone's and needs the store_system_memory permission. " +
    "Pinned memories are added to every chat's system prompt (at most 20 are).",
  inputSchema: z.object({
    content: z.string().trim().min(1).max(MAX_MEMORY_LENGTH).describe("The fact to remember"),
    category: z.string().trim().min(1).max(64).describe("A short label to find it by, e.g. preference or server-notes"),
    scope: z.enum(MEMORY_SCOPES).optional().describe("user (default): yours alone; system: everyone's (needs store_system_memory)"),
    pinned: z.boolean().optional().describe("Always recalled, whatever the query (default false)"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args, { db, access, config }) {
    const scope = args.scope ?? "user";
    if (scope === "system" && !hasAdminPermission(access, "store_system_memory"))
      throw new ToolError("storing a system memory needs the store_system_memory permission; store it with scope `user` instead");
    const { memory, note } = await rememberMemory(db, config.llm, {
      scope,
      userId: access.principal.userId,
      username: access.principal.username,
      category: args.category,
      content: args.content,
      pinned: args.pinned ?? false,
    });
    return [`Stored memory ${memory.id}`, `scope: ${memory.scope}`, `category: ${memory.category}`, `pinned: ${memory.pinned}`, `search: ${note}`].join("\n");
  },
});
