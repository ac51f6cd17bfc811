import { z } from "zod";
import { overviewFor } from "../../ai/overview-scope.ts";
import { defineTool } from "../tool.ts";
import { connectionArgs, permittedConnections } from "../vocabulary.ts";
import { FROM_AN_LLM } from "../fence.ts";

export const getOverviewTool = defineTool({
  name: "get_overview",
  title: "Estate overview",
  description:
    "The servers you can see at a glance: a short summary (written by the configured LLM, again only when something significant changed) " +
    "followed by the snapshot as JSON: servers with status and alert counts, alert totals and the top alerts, maintenance windows now and in the next 24 h, the last day's events. " +
    "Narrow it with connection_id/connection_ids.",
  inputSchema: z.object(connectionArgs),
  dataFrom: FROM_AN_LLM,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  async run(args, { db, access, config, log }) {
    const result = await overviewFor(db, access, config.llm, log, { connectionIds: await permittedConnections(db, access, args) });
    const head =
      result.status === "empty"
        ? "You can see no server."
        : (result.summary ?? (result.llm === "unconfigured" ? "(no LLM is configured: no summary)" : "(the summary is being written: ask again shortly)"));
    return `${head}\n\nSnapshot:\n${JSON.stringify(result.snapshot)}`;
  },
});
