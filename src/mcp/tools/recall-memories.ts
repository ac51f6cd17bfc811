import { z } from "zod";
import { recall } from "../../ai/memories.ts";
import { MEMORY_SCOPES } from "../../datastore/memories.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { FROM_USERS } from "../fence.ts";

const COLUMNS = ["id", "scope", "category", "pinned", "score", "content", "updated_at"] as const;

export const recallMemoriesTool = defineTool({
  name: "recall_memories",
  title: "Recall memories",
  description:
    "Finds your memories and the system's that match a query, best first, as TSV (" +
    COLUMNS.join(", ") +
    "): by meaning when an embedding provider " +
    "and pgvector are available, else by words. Pinned memories are always listed after the matches (score empty). Filter by category and scope; `limit` matches (default 10).",
  inputSchema: z.object({
    query: z.string().trim().min(1).max(2000).describe("What to look for, in words"),
    category: z.string().max(64).optional().describe("Only memories of this category"),
    scope: z.enum(MEMORY_SCOPES).optional().describe("Only your own memories (user) or only everyone's (system); default both"),
    limit: z.number().int().min(1).max(100).optional().describe("Most memories to return, 1 to 100 (default 10)"),
  }),
  dataFrom: FROM_USERS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { db, access, config }) {
    const { memories } = await recall(db, config.llm, access.principal.userId, {
      text: args.query,
      category: args.category,
      scope: args.scope,
      limit: args.limit ?? 10,
    });
    return toTsv(
      COLUMNS,
      memories.map((m) => [m.id, m.scope, m.category, m.pinned, m.score === null ? null : Math.round(m.score * 1000) / 1000, m.content, m.updated_at]),
    );
  },
});
