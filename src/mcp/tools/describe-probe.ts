import { z } from "zod";
import { findProbe } from "../../probes/index.ts";
import type { ColumnKind } from "../../probes/types.ts";
import { defineTool, ToolError } from "../tool.ts";
import { toTsv } from "../tsv.ts";

/** What an assistant can do with a column of each kind, appended to its description. */
const KIND_NOTE: Record<ColumnKind, string> = {
  dimension: "identifier",
  gauge: "gauge",
  counter: "cumulative counter; REST derives _per_sec and _delta",
  time_ms: "cumulative milliseconds; REST derives _pct and _delta",
  session_ms: "cumulative session milliseconds; REST derives _sessions and _delta",
  watermark: "lifetime watermark since reset",
  ratio: "ratio",
  marker: "statistics reset marker",
};

export const describeProbe = defineTool({
  name: "describe_probe",
  title: "Describe a metric probe",
  description:
    "Describes the stored columns of one probe: TSV with columns column_name, data_type, description and " +
    "column_type (metric: numeric values to query; dimension: identifiers such as database_name).",
  inputSchema: z.object({ probe_name: z.string().min(1).max(63).describe("Name of a probe from list_probes, e.g. pg_stat_database") }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ probe_name }) {
    const probe = findProbe(probe_name);
    if (!probe) throw new ToolError(`probe \`${probe_name}\` not found; list_probes shows the probes`);
    const rows = [
      ["connection_id", "integer", "Id of the monitored connection", "dimension"],
      ["collected_at", "timestamp with time zone", "When the sample was taken (shared by all rows of one run)", "dimension"],
      ...probe.columns.map((c) => [
        c.name,
        c.type,
        `${c.description} (${KIND_NOTE[c.kind]})`,
        c.kind === "dimension" || c.kind === "marker" ? "dimension" : "metric",
      ]),
    ];
    return toTsv(["column_name", "data_type", "description", "column_type"], rows);
  },
});
