import { z } from "zod";
import { listAlertRules, ruleAvailability } from "../../datastore/alert-rules.ts";
import { defineTool } from "../tool.ts";
import { toTsv } from "../tsv.ts";
import { FROM_USERS } from "../fence.ts";

export const getAlertRules = defineTool({
  name: "get_alert_rules",
  title: "Get alert rules",
  description:
    "Lists the alert rules with their defaults as TSV (id, name, category, metric_name, metric_unit, operator, threshold, severity, enabled, available, unavailable_reason, description). " +
    "Servers, clusters and groups can override a rule; optionally filter by category.",
  inputSchema: z.object({ category: z.string().max(64).optional().describe("Only rules of this category, e.g. connections, replication, storage") }),
  dataFrom: FROM_USERS,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { db }) {
    const rules = (await listAlertRules(db)).filter((r) => args.category === undefined || r.category === args.category);
    const availability = await ruleAvailability(db, rules);
    return toTsv(
      [
        "id",
        "name",
        "category",
        "metric_name",
        "metric_unit",
        "operator",
        "threshold",
        "severity",
        "enabled",
        "available",
        "unavailable_reason",
        "description",
      ],
      rules.map((r) => [
        r.id,
        r.name,
        r.category,
        r.metric_name,
        r.metric_unit,
        r.default_operator,
        r.default_threshold,
        r.default_severity,
        r.default_enabled,
        availability.get(r.id)!.available,
        availability.get(r.id)!.unavailable_reason,
        r.description,
      ]),
    );
  },
});
