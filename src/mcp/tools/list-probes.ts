import { z } from "zod";
import { probeRowCounts } from "../../samples/row-counts.ts";
import { PROBES } from "../../probes/index.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";

export const listProbes = defineTool({
  name: "list_probes",
  title: "List metric probes",
  description:
    "Lists the probes whose samples pglens stores in its datastore: TSV with columns name, description, " +
    "row_count (approximate number of stored rows) and scope (server: one row set per server; database: per database). " +
    "Use a name with describe_probe and query_metrics.",
  inputSchema: z.object({}),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(_args, { db }) {
    const counts = await probeRowCounts(
      db,
      PROBES.map((p) => p.name),
    );
    const rows = [...PROBES]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((p) => [p.name, p.description, counts.get(p.name) ?? 0, p.scope === "database" ? "database" : "server"]);
    return toTsv(["name", "description", "row_count", "scope"], rows);
  },
});
