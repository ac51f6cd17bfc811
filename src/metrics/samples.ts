/** Sample rows as the pipeline sees them: grouped by collected_at, loopback interfaces removed. */
import { LOOPBACK_INTERFACES } from "../probes/pg_sys_network_info.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { groupBy } from "../group-by.ts";

export type Row = Record<string, unknown>;

/** All rows of one probe run of one connection. */
export interface Sample {
  t: number; // collected_at, epoch ms
  rows: Row[];
}

const toMs = (v: unknown): number => (v instanceof Date ? v.getTime() : typeof v === "number" ? v : Date.parse(String(v)));

/** True for rows no query may see (SPEC: `lo`/`lo0` of pg_sys_network_info). */
export function isExcludedRow(probe: ProbeDefinition, row: Row): boolean {
  return probe.name === "pg_sys_network_info" && LOOPBACK_INTERFACES.includes(String(row.interface_name));
}

/** Groups rows ordered by collected_at into samples. */
export function groupSamples(probe: ProbeDefinition, rows: readonly Row[]): Sample[] {
  const samples: Sample[] = [];
  for (const row of rows) {
    if (isExcludedRow(probe, row)) continue;
    const t = toMs(row.collected_at);
    const last = samples[samples.length - 1];
    if (last && last.t === t) last.rows.push(row);
    else samples.push({ t, rows: [row] });
  }
  return samples;
}

export function entityKey(probe: ProbeDefinition, row: Row): string {
  return probe.keys.length === 1 ? String(row[probe.keys[0]]) : JSON.stringify(probe.keys.map((k) => row[k]));
}

/** Two reset markers are the same when both are absent or both name the same instant. */
export function sameMarker(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  return toMs(a) === toMs(b);
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort(); // numeric order, and far faster than a comparator on long windows
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** One connection's rows as samples per group key: every sample time of the connection, each holding only the group's rows. */
export function samplesPerGroup(probe: ProbeDefinition, columns: readonly string[], own: readonly Row[]): Map<string, Sample[]> {
  const keyOfValues = (r: Row) => JSON.stringify(columns.map((c) => (r[c] === null || r[c] === undefined ? null : String(r[c]))));
  // A group's key is spelled once per group, not once per row (a day of 20 databases is 29,000 rows).
  const keys = new Map<unknown, string>();
  const keyOf = (r: Row) => {
    if (columns.length > 1) return keyOfValues(r);
    const value = r[columns[0]];
    let key = keys.get(value);
    if (key === undefined) keys.set(value, (key = keyOfValues(r)));
    return key;
  };
  const sampleTimes = groupSamples(probe, own).map((s) => s.t);
  return new Map(
    [...groupBy(own, keyOf)].map(([key, list]) => {
      const mine = new Map(groupSamples(probe, list).map((s) => [s.t, s.rows]));
      return [key, sampleTimes.map((t) => ({ t, rows: mine.get(t) ?? [] }))];
    }),
  );
}
