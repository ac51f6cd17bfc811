/**
 * A probe definition: what one statistics view contributes to the datastore. The catalogue is the single
 * source of truth for the `metrics.<probe>` tables, list_probes/describe_probe and the counter registry.
 */

/**
 * How a stored column behaves over time:
 * - `dimension`: identifies or describes an entity (names, ids, states); never aggregated;
 * - `gauge`: a point-in-time value (backends, sizes, live tuples);
 * - `counter`: cumulative events or bytes since the last statistics reset;
 * - `time_ms`: cumulative milliseconds spent (e.g. blk_read_time);
 * - `session_ms`: pg_stat_database's cumulative session time columns;
 * - `watermark`: a lifetime minimum/maximum since reset;
 * - `ratio`: a derived average or percentage;
 * - `marker`: a statistics reset timestamp that tells when cumulative columns restarted.
 */
export type ColumnKind = "dimension" | "gauge" | "counter" | "time_ms" | "session_ms" | "watermark" | "ratio" | "marker";

export const CUMULATIVE_KINDS: ReadonlySet<ColumnKind> = new Set(["counter", "time_ms", "session_ms"]);

export interface ProbeColumn {
  name: string;
  /** PostgreSQL type of the stored column. */
  type: string;
  kind: ColumnKind;
  description: string;
  /** For cumulative columns: the marker column whose change means this column was reset. */
  resetBy?: string;
}

export type ProbeScope = "server" | "database" | "system";

/** How the collector gathers a probe on a monitored server. */
export interface ProbeCollection {
  /** `server`: once, in the maintenance database; `each_database`: in every connectable database (rows get database_name). */
  runs: "server" | "each_database";
  /** An extension the probe needs in the database it runs in; the probe is skipped where it is missing. */
  extension?: string;
  /** The statements to run for a server major version (their rows are stored together), or null when the version lacks the view. */
  sql(major: number, context: { extensionSchema?: string; extensionVersion?: string }): string[] | null;
}

export interface ProbeDefinition {
  name: string;
  description: string;
  /** `server`: once per connection; `database`: once per connectable database; `system`: host figures via system_stats. */
  scope: ProbeScope;
  defaultIntervalSeconds: number;
  defaultRetentionDays: number;
  /** Columns that identify an entity within one sample (besides connection_id and collected_at). */
  keys: readonly string[];
  /** Every stored column except connection_id and collected_at, in table order; keys included. */
  columns: readonly ProbeColumn[];
  /**
   * false: the entity cells keep no facts of gauges over the hour's 5-minute parts (ddl.ts PART_FACTS), and
   * per-entity gauge reads take whole hours from the cells and the rest raw. For probes sampled every 5 minutes or
   * more seldom by default, where a part holds one sample at most and the parts would be most of a cell.
   */
  gaugeParts?: false;
  collect: ProbeCollection;
}
