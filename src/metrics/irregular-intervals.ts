/**
 * Per entity, the intervals between consecutive samples that are not plain counter growth (the entity appeared
 * or vanished; a cumulative column was reset, went down, or changed between null and a value), with the entity's
 * valid change of each column in them (as intervals.ts judges validity; null where not valid). In every other
 * interval each column's change is the plain difference of the entity's two samples, or null on both sides, so
 * the change of an entity over consecutive intervals is a difference of its cumulative values corrected by these.
 * The sample writer's SQL for one-sample batches (samples/record-sample-changes.ts) is held to it by tests.
 */
import type { ProbeColumn, ProbeDefinition } from "../probes/types.ts";
import { type Row, type Sample, entityKey, sameMarker } from "./samples.ts";

export interface IrregularInterval {
  /** The interval's end: the later sample's collected_at (epoch ms). */
  to: number;
  /** The entity's row (its key columns identify it). */
  entity: Row;
  /** Per column (in the order given): the valid change, or null. */
  changes: Array<number | null>;
}

const numeric = (v: unknown): number | null => (v === null || v === undefined ? null : typeof v === "number" ? v : Number(v));

/** One column of one entity between two samples: its valid change, and whether it is plain growth. */
function columnChange(column: ProbeColumn, before: Row, now: Row): { change: number | null; regular: boolean } {
  const a = numeric(before[column.name]);
  const b = numeric(now[column.name]);
  if (a === null || b === null) return { change: null, regular: a === null && b === null };
  if (column.resetBy && !sameMarker(now[column.resetBy], before[column.resetBy])) return { change: null, regular: false };
  return b >= a ? { change: b - a, regular: true } : { change: null, regular: false };
}

export function irregularIntervals(probe: ProbeDefinition, columns: readonly ProbeColumn[], sequence: readonly Sample[]): IrregularInterval[] {
  const found: IrregularInterval[] = [];
  const nothing = () => columns.map(() => null);
  for (let i = 1; i < sequence.length; i++) {
    const to = sequence[i].t;
    const previous = new Map(sequence[i - 1].rows.map((r) => [entityKey(probe, r), r]));
    for (const row of sequence[i].rows) {
      const key = entityKey(probe, row);
      const before = previous.get(key);
      previous.delete(key);
      if (!before) {
        found.push({ to, entity: row, changes: nothing() }); // appeared
        continue;
      }
      const judged = columns.map((c) => columnChange(c, before, row));
      if (judged.some((j) => !j.regular)) found.push({ to, entity: row, changes: judged.map((j) => j.change) });
    }
    for (const gone of previous.values()) found.push({ to, entity: gone, changes: nothing() }); // vanished
  }
  return found;
}
