import { quoteLiteral } from "../../probes/ddl.ts";
import { probesAt } from "./probes-at.ts";
import type { Migration } from "./types.ts";

/**
 * Alerts raised on the same server or cluster within `alerter_settings.correlation_window_seconds` (120 by
 * default, the predecessor's) share a correlation id: the id of the group's first alert. Notifications of a
 * group queued together go out as one message per channel. Alerts get the probe their metric comes from.
 */
export const migration: Migration = {
  version: 42,
  name: "alert_correlation",
  statements: [
    "ALTER TABLE alerter_settings ADD COLUMN correlation_window_seconds integer NOT NULL DEFAULT 120 CHECK (correlation_window_seconds BETWEEN 0 AND 86400)",
    "ALTER TABLE alerts ADD COLUMN correlation_id bigint",
    "UPDATE alerts SET correlation_id = id",
    "ALTER TABLE alerts ALTER COLUMN correlation_id SET NOT NULL",
    // An alert that joins no group starts its own: its id, which only exists once the row's defaults are applied.
    `CREATE FUNCTION alerts_own_correlation() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN NEW.correlation_id := coalesce(NEW.correlation_id, NEW.id); RETURN NEW; END $$`,
    "CREATE TRIGGER alerts_own_correlation BEFORE INSERT ON alerts FOR EACH ROW EXECUTE FUNCTION alerts_own_correlation()",
    "CREATE INDEX alerts_correlation ON alerts (correlation_id)",
    `UPDATE alerts SET probe_name = split_part(metric_name, '.', 1)
      WHERE probe_name IS NULL AND split_part(metric_name, '.', 1) IN (${probesAt(42)
        .map((p) => quoteLiteral(p.name))
        .join(", ")})`,
  ],
};
