import { z } from "zod";
import { quoteIdent } from "../../probes/ddl.ts";
import { fence } from "../fence.ts";
import { defineTool } from "../tool.ts";
import { MAX_WHERE_LENGTH, checkWhereClause } from "../where-clause.ts";
import { liveTarget, refusal, runLive, targetArgs } from "./live-target.ts";

export const countRows = defineTool({
  name: "count_rows",
  title: "Count the rows of a table",
  description:
    "Counts the rows of one table or view on a monitored database (exactly, with count(*)), optionally only those matching `where`, " +
    "inside a read-only transaction that is always rolled back, under the live tools' statement timeout. `where` is one SQL condition " +
    "(no `;`, no comments, balanced parentheses), e.g. created_at > now() - interval '1 day'. The answer is fenced like query_database's.",
  inputSchema: z.object({
    ...targetArgs,
    table: z.string().min(1).max(63).describe("The table or view, as named in the database (case-sensitive, unquoted), e.g. orders"),
    schema: z.string().min(1).max(63).optional().describe("Its schema (default public)"),
    where: z.string().max(MAX_WHERE_LENGTH).optional().describe("Only rows matching this SQL condition, e.g. status = 'open'"),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    const where = args.where === undefined ? undefined : checkWhereClause(args.where);
    const { conn, database } = await liveTarget(ctx, args);
    const relation = `${quoteIdent(args.schema ?? "public")}.${quoteIdent(args.table)}`;
    const sql = `SELECT count(*) AS count FROM ${relation}${where ? ` WHERE (${where})` : ""}`;
    const result = await runLive(ctx, conn, database, (client) => client.query<{ count: string }>(sql)).catch(refusal("count"));
    return fence(`Count on connection ${conn.id} (${conn.name}), database ${database}.`, `SQL: ${sql}\nCount: ${result.rows[0].count}`, "");
  },
});
