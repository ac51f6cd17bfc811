/** Parses requested metric names against the probe catalogue (the counter registry). */
import { findColumn, metricColumns } from "../probes/index.ts";
import type { ColumnKind, ProbeDefinition } from "../probes/types.ts";
import { InputError } from "../errors.ts";

export type MetricForm = "raw" | "per_sec" | "delta" | "pct" | "sessions" | "dead_tuple_ratio";

export interface MetricRequest {
  /** The name as requested, e.g. `xact_commit_per_sec`. */
  name: string;
  /** The base column (`dead_tuple_ratio` for that metric). */
  metric: string;
  form: MetricForm;
  unit: "" | "/s" | "ms" | "%" | "sessions";
  /** Kind of the base column. */
  kind: ColumnKind | "derived";
}

export const DEAD_TUPLE_RATIO = "dead_tuple_ratio";

const SUFFIXES: Array<[string, Exclude<MetricForm, "raw" | "dead_tuple_ratio">]> = [
  ["_per_sec", "per_sec"],
  ["_delta", "delta"],
  ["_pct", "pct"],
  ["_sessions", "sessions"],
];

const KIND_PHRASE: Record<ColumnKind, string> = {
  dimension: "a dimension (an identifier, not a metric)",
  gauge: "a gauge",
  counter: "a cumulative counter",
  time_ms: "a cumulative time counter (milliseconds)",
  session_ms: "a session time counter (milliseconds)",
  watermark: "a lifetime watermark",
  ratio: "a ratio",
  marker: "a statistics reset marker",
};

const APPLIES: Record<Exclude<MetricForm, "raw" | "dead_tuple_ratio">, { kinds: ColumnKind[]; what: string }> = {
  per_sec: { kinds: ["counter"], what: "a cumulative counter" },
  delta: { kinds: ["counter", "time_ms", "session_ms"], what: "a cumulative counter, time counter or session time column" },
  pct: { kinds: ["time_ms"], what: "a cumulative time counter" },
  sessions: { kinds: ["session_ms"], what: "a session time column (session_time, active_time, idle_in_transaction_time)" },
};

function unitOf(form: MetricForm, kind: ColumnKind | "derived"): MetricRequest["unit"] {
  switch (form) {
    case "per_sec":
      return "/s";
    case "delta":
      return kind === "counter" ? "" : "ms";
    case "pct":
    case "dead_tuple_ratio":
      return "%";
    case "sessions":
      return "sessions";
    default:
      return "";
  }
}

function hintFor(base: string, kind: ColumnKind): string {
  if (kind === "time_ms") return `; use \`${base}_pct\` for the share of time spent, or \`${base}_delta\` for milliseconds per bucket`;
  if (kind === "session_ms") return `; use \`${base}_sessions\` for the average number of sessions, or \`${base}_delta\` for milliseconds per bucket`;
  return "";
}

function refuse(name: string, probe: ProbeDefinition, detail: string): never {
  throw new InputError(`metric \`${name}\` not supported for probe \`${probe.name}\`: ${detail}`);
}

export function parseMetricName(name: string, probe: ProbeDefinition): MetricRequest {
  const column = findColumn(probe, name);
  if (column) {
    if (column.kind === "dimension" || column.kind === "marker") refuse(name, probe, `\`${name}\` is ${KIND_PHRASE[column.kind]}, not a numeric metric`);
    return { name, metric: name, form: "raw", unit: "", kind: column.kind };
  }
  if (name === DEAD_TUPLE_RATIO) {
    if (!findColumn(probe, "n_live_tup") || !findColumn(probe, "n_dead_tup"))
      refuse(name, probe, "it needs `n_live_tup` and `n_dead_tup`, which this probe does not collect (try `pg_stat_all_tables`)");
    return { name, metric: DEAD_TUPLE_RATIO, form: "dead_tuple_ratio", unit: "%", kind: "derived" };
  }
  for (const [suffix, form] of SUFFIXES) {
    if (!name.endsWith(suffix) || name.length === suffix.length) continue;
    const base = name.slice(0, -suffix.length);
    const baseColumn = findColumn(probe, base);
    if (!baseColumn) refuse(name, probe, `the probe has no column \`${base}\``);
    const rule = APPLIES[form];
    if (!rule.kinds.includes(baseColumn.kind)) {
      if (form === "per_sec") refuse(name, probe, `\`${base}\` is ${KIND_PHRASE[baseColumn.kind]}, not a cumulative counter${hintFor(base, baseColumn.kind)}`);
      refuse(name, probe, `\`${suffix}\` needs ${rule.what}, but \`${base}\` is ${KIND_PHRASE[baseColumn.kind]}${hintFor(base, baseColumn.kind)}`);
    }
    return { name, metric: base, form, unit: unitOf(form, baseColumn.kind), kind: baseColumn.kind };
  }
  throw new InputError(
    `metric \`${name}\` not found in probe \`${probe.name}\`: it is neither a column of the probe nor a derived name (<column>_per_sec, _delta, _pct, _sessions, dead_tuple_ratio)`,
  );
}

/** A comma-separated `metrics` parameter; empty means every metric column of the probe. */
export function parseMetricList(list: string | undefined, probe: ProbeDefinition): MetricRequest[] {
  const names = (list ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) return metricColumns(probe).map((c) => parseMetricName(c.name, probe));
  return names.map((n) => parseMetricName(n, probe));
}
