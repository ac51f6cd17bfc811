/** What a grouped read of counter changes asks for and answers, by every path that reads them (raw rows, by difference). */
import type { Buckets } from "../metrics/buckets.ts";
import type { ProbeDefinition } from "../probes/types.ts";

export interface GroupedChangeQuery {
  probe: ProbeDefinition;
  connectionId: number;
  /** Cumulative columns. */
  columns: readonly string[];
  /** Key columns that form a group; none: one group of everything. */
  groupBy: readonly string[];
  buckets: Buckets;
  intervalSeconds: number;
  /** Equality filters on stored columns. */
  filters?: Readonly<Record<string, string>>;
  /** Also the per-second rates (costs a per-interval step); without, `rate` holds nulls. */
  rates?: boolean;
  /** From when the hourly change cells are complete (levels_from), where the caller knows; absent: not read. */
  cellsFrom?: number;
  /** Read by difference only where the samples are evenly spaced (differenced-changes.ts), not reading their sequence. */
  onlyEven?: boolean;
}

export interface GroupedChanges {
  /** The group's key values as text, in groupBy order. */
  group: string[];
  /** Per column: bucket index -> summed change. */
  delta: Array<Map<number, number | null>>;
  /** Per column: bucket index -> mean change per second. */
  rate: Array<Map<number, number | null>>;
}
