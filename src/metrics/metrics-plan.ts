/**
 * A metrics request checked and resolved into the plan every read and the pipeline work from: the probe, the
 * metrics, the aggregation, the filters as stored columns, the buckets and how far before them a sample may be
 * borrowed. Pure: the caller supplies what it read about the connections (their intervals, their rollups' start).
 */
import { InputError } from "../errors.ts";
import { findColumn, findProbe } from "../probes/index.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { AGGREGATIONS, type Aggregation } from "./aggregate.ts";
import { type Buckets, layoutBuckets } from "./buckets.ts";
import { type MetricRequest, parseMetricList } from "./metric-names.ts";
import { borrowLimitMs } from "./series.ts";
import type { Window } from "./window.ts";

export interface MetricsPlan {
  probe: ProbeDefinition;
  metrics: MetricRequest[];
  aggregation: Aggregation;
  /** Stored column -> value: the entities to read (all when empty). */
  filters: Record<string, string>;
  connectionIds: readonly number[];
  window: Window;
  buckets: Buckets;
  /** The longest collection interval of the connections asked for. */
  intervalSeconds: number;
  /** The earliest instant (epoch ms) a sample before the window may be borrowed from. */
  borrowFrom: number;
  /** From when (epoch ms) the rollups of every connection asked for are complete. */
  levelsFrom: number;
  /** Key columns to group by (one series per group), or absent for one series per connection. */
  groupBy?: string[];
  /** Compute from raw rows only, the reference every other read is tested against. */
  reference?: boolean;
}

export interface MetricsRequest {
  probeName: string;
  connectionIds: readonly number[];
  window: Window;
  buckets?: number;
  /** A given bucket layout instead of a requested count (the summary endpoints). */
  layout?: Buckets;
  aggregation?: string;
  metrics?: string;
  filters?: { database_name?: string; schema_name?: string; table_name?: string };
  /** `group_by` as the request spells it. */
  groupBy?: string;
}

/** What the datastore said about the connections asked for (queries/metrics-context.ts). */
export interface ConnectionsContext {
  intervals: ReadonlyMap<number, number>;
  levelsFrom: number;
}

/** Checks what can be checked without the datastore; run before reading anything. */
export function checkMetricsRequest(q: MetricsRequest) {
  const probe = requireProbe(q.probeName);
  const metrics = parseMetricList(q.metrics, probe);
  if (metrics.length === 0) throw new InputError(`probe \`${probe.name}\` has no numeric metrics; describe_probe lists its columns`);
  return {
    probe,
    metrics,
    aggregation: parseAggregation(q.aggregation),
    filters: resolveFilters(probe, q.filters),
    groupBy: q.groupBy === undefined ? undefined : resolveGroupBy(probe, q.groupBy),
  };
}

export function planMetrics(q: MetricsRequest, checked: ReturnType<typeof checkMetricsRequest>, context: ConnectionsContext): MetricsPlan {
  const intervalSeconds = Math.max(...context.intervals.values());
  const buckets = q.layout ?? layoutBuckets(q.window.start, q.window.end, intervalSeconds, q.buckets);
  return {
    ...checked,
    connectionIds: q.connectionIds,
    window: q.window,
    buckets,
    intervalSeconds,
    borrowFrom: q.window.start - borrowLimitMs(buckets),
    levelsFrom: context.levelsFrom,
  };
}

export function requireProbe(name: string): ProbeDefinition {
  const probe = findProbe(name);
  if (!probe) throw new InputError(`unknown probe \`${name}\`; list_probes (or GET /api/v1/mcp/tools) shows the probes`);
  return probe;
}

export function parseAggregation(value: string | undefined): Aggregation {
  const how = (value ?? "avg").toLowerCase();
  if (!(AGGREGATIONS as readonly string[]).includes(how))
    throw new InputError(`\`aggregation\` must be one of ${AGGREGATIONS.join(", ")}; got ${JSON.stringify(value)}`);
  return how as Aggregation;
}

/** Which stored column each filter parameter narrows, per probe. */
const FILTER_COLUMNS: Record<string, readonly string[]> = {
  database_name: ["database_name", "datname"],
  schema_name: ["schemaname"],
  table_name: ["relname"],
};
const FILTER_WHAT: Record<string, string> = { database_name: "database", schema_name: "schema", table_name: "table" };

export function resolveFilters(probe: ProbeDefinition, filters: MetricsRequest["filters"] = {}): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [param, value] of Object.entries(filters)) {
    if (value === undefined || value === "") continue;
    const column = FILTER_COLUMNS[param].find((c) => findColumn(probe, c));
    if (!column) throw new InputError(`\`${param}\` does not apply to probe \`${probe.name}\`: it has no ${FILTER_WHAT[param]} column`);
    resolved[column] = value;
  }
  return resolved;
}

/** The request's names as the probe's key columns; the filter spellings schema_name and table_name are accepted too. */
export function resolveGroupBy(probe: ProbeDefinition, groupBy: string): string[] {
  const names = groupBy
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new InputError("`group_by` names no column; give key columns of the probe, e.g. database_name");
  return [
    ...new Set(
      names.map((n) => {
        const column = (FILTER_COLUMNS[n] ?? [n]).find((c) => probe.keys.includes(c));
        if (!column) {
          const keys = probe.keys.length ? probe.keys.join(", ") : "none (it has one entity per sample)";
          throw new InputError(`\`group_by\`: \`${n}\` is not a key column of probe \`${probe.name}\`; its keys are ${keys}`);
        }
        return column;
      }),
    ),
  ];
}

/** Stored columns the requested metrics read: bases, their reset markers, dead_tuple_ratio's inputs. */
export function neededColumns(probe: ProbeDefinition, metrics: readonly MetricRequest[]): string[] {
  const columns = new Set<string>();
  for (const m of metrics) {
    if (m.form === "dead_tuple_ratio") {
      columns.add("n_live_tup").add("n_dead_tup");
      continue;
    }
    columns.add(m.metric);
    const marker = findColumn(probe, m.metric)?.resetBy;
    if (m.form !== "raw" && marker) columns.add(marker);
  }
  return [...columns];
}
