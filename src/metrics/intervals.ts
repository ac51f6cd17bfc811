/**
 * Per-entity differencing of consecutive samples. The change of the interval
 * (t_prev, t] belongs to the bucket holding t. Per entity: present in both samples -> its change counts;
 * appeared or vanished -> nothing; a negative change or a changed reset marker -> that entity's change is
 * invalid. The sample writer records these per sample; queries judge gaps (series.ts).
 */
import type { ProbeDefinition } from "../probes/types.ts";
import { type Row, type Sample, entityKey, sameMarker } from "./samples.ts";

export interface Interval {
  from: number;
  to: number;
  /** Sum of the valid entity changes, or null when no entity had a valid change. */
  change: number | null;
}

const numeric = (v: unknown): number | null => (v === null || v === undefined ? null : typeof v === "number" ? v : Number(v));

function entityMap(probe: ProbeDefinition, sample: Sample): Map<string, Row> {
  return new Map(sample.rows.map((r) => [entityKey(probe, r), r]));
}

/** Intervals between consecutive samples of `sequence` for one cumulative column; gaps are judged later. */
export function intervalsFor(probe: ProbeDefinition, column: string, sequence: readonly Sample[]): Interval[] {
  return intervalsForColumns(probe, [column], sequence)[0];
}

/** intervalsFor of each column, each sample's entities looked up once for all of them. */
export function intervalsForColumns(probe: ProbeDefinition, columns: readonly string[], sequence: readonly Sample[]): Interval[][] {
  const markers = columns.map((column) => probe.columns.find((c) => c.name === column)?.resetBy);
  const intervals = columns.map((): Interval[] => []);
  let previous = sequence.length ? entityMap(probe, sequence[0]) : new Map<string, Row>();
  for (let i = 1; i < sequence.length; i++) {
    const from = sequence[i - 1].t;
    const to = sequence[i].t;
    const current = entityMap(probe, sequence[i]);
    const changes = new Array<number | null>(columns.length).fill(null);
    for (const [key, row] of current) {
      const before = previous.get(key);
      if (!before) continue; // appeared: contributes none of its existing total
      for (let c = 0; c < columns.length; c++) {
        const now = numeric(row[columns[c]]);
        const then = numeric(before[columns[c]]);
        if (now === null || then === null) continue;
        const marker = markers[c];
        if (marker && !sameMarker(row[marker], before[marker])) continue; // statistics reset
        const delta = now - then;
        if (delta < 0) continue; // reset without a marker
        changes[c] = (changes[c] ?? 0) + delta;
      }
    }
    for (let c = 0; c < columns.length; c++) intervals[c].push({ from, to, change: changes[c] });
    previous = current;
  }
  return intervals;
}
