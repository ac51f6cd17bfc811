import { z } from "zod";
import { oneConnection } from "../vocabulary.ts";
import { LATEST_DEFAULT_LIMIT, LATEST_MAX_LIMIT, latestSnapshot } from "../../queries/latest-snapshot.ts";
import { requireProbe } from "../../metrics/metrics-plan.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { FROM_A_SERVER } from "../fence.ts";

export const getLatestSnapshot = defineTool({
  name: "get_latest_snapshot",
  title: "Get the latest snapshot of a probe",
  description:
    "The rows of a probe's latest sample on one connection, one per entity (table, index, session, statement, ...), as TSV with every stored " +
    "column (describe_probe explains them), ordered by order_by and limited. The first line says when the sample was taken and how many rows it has.",
  inputSchema: z.object({
    connection_id: oneConnection(),
    probe_name: z.string().min(1).max(63).describe("Probe name from list_probes, e.g. pg_stat_all_tables"),
    database_name: z.string().max(63).optional().describe("Only this database's rows"),
    exclude_schemas: z.array(z.string().min(1).max(63)).max(100).optional().describe("Schemas to leave out (probes with a schemaname column)"),
    order_by: z.string().max(63).optional().describe("A column of the probe; default its first key column"),
    order: z.enum(["asc", "desc"]).optional().describe("Ranking order (default desc)"),
    limit: z.number().int().min(1).max(LATEST_MAX_LIMIT).optional().describe(`Most rows to return, 1 to ${LATEST_MAX_LIMIT} (default ${LATEST_DEFAULT_LIMIT})`),
  }),
  dataFrom: FROM_A_SERVER,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { readDb: db, access }) {
    const probe = requireProbe(args.probe_name);
    const result = await latestSnapshot(db, {
      access,
      connectionId: args.connection_id,
      probeName: args.probe_name,
      databaseName: args.database_name,
      excludeSchemas: args.exclude_schemas,
      orderBy: args.order_by,
      order: args.order ?? "desc",
      limit: args.limit ?? LATEST_DEFAULT_LIMIT,
    });
    if (result.collected_at === null) return `No samples of ${probe.name} on connection ${args.connection_id} match.`;
    const columns = probe.columns.map((c) => c.name);
    const header = `${probe.name} collected at ${result.collected_at}: ${result.rows.length} of ${result.total_count} rows`;
    return [
      header,
      "",
      toTsv(
        columns,
        result.rows.map((r) => columns.map((c) => r[c])),
      ),
    ].join("\n");
  },
});
