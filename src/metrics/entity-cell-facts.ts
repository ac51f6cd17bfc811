/**
 * The facts of hourly entity cells (metrics.<probe>__entity_cells) contributed by the intervals that end at
 * given samples, and by their gauges' values, computed from the samples themselves: what the sample writer adds
 * to the cells when a batch of several samples only appends to a connection's history. The SQL in
 * samples/entity-cells.ts computes the same facts from raw rows (the writer's path for a one-sample batch and for
 * any batch that does not only append); both judge an entity's change as intervals.ts does.
 */
import { HOUR_MS, HOUR_PARTS } from "../probes/ddl.ts";
import type { ProbeColumn, ProbeDefinition } from "../probes/types.ts";
import { type Row, type Sample, sameMarker } from "./samples.ts";

const PART_MS = HOUR_MS / HOUR_PARTS;

export interface EntityCellFacts {
  hour: number; // cell_start, epoch ms
  /** The key values as text; empty for the connection's own intervals. */
  entity: string[];
  intervals: number;
  maxSpanMs: number | null;
  columns: Array<{ n: number; sum: number | null; ratioSum: number | null }>;
  /** Per gauge: the level facts of its values (as time rollups keep them), and their facts over the hour's parts (ddl.ts PART_FACTS). */
  gauges: GaugeFacts[];
}

interface GaugeFacts {
  n: number;
  sum: number | null;
  min: number | null;
  max: number | null;
  last: number | null;
  lastAt: number | null;
  partN: number[];
  partSum: number[];
  partLastAt: Array<number | null>;
  partLast: Array<number | null>;
  /** Each part's own extremes (the others are running facts). */
  partMin: Array<number | null>;
  partMax: Array<number | null>;
}

const noGaugeFacts = (): GaugeFacts => ({
  n: 0,
  sum: null,
  min: null,
  max: null,
  last: null,
  lastAt: null,
  partN: Array(HOUR_PARTS).fill(0),
  partSum: Array(HOUR_PARTS).fill(0),
  partLastAt: Array(HOUR_PARTS).fill(null),
  partLast: Array(HOUR_PARTS).fill(null),
  partMin: Array(HOUR_PARTS).fill(null),
  partMax: Array(HOUR_PARTS).fill(null),
});

const numeric = (v: unknown): number | null => (v === null || v === undefined ? null : typeof v === "number" ? v : Number(v));

/** Key values exactly as the datastore's `::text` spells them; undefined for a type whose spelling may differ. */
function keyText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "bigint" || typeof value === "boolean" || (typeof value === "number" && Number.isSafeInteger(value))) return String(value);
  return undefined;
}

/**
 * Facts per hour and entity of the intervals ending at `sequence[first..]` (a connection's visible samples in
 * time order; `sequence[first - 1]`, when there is one, is the sample before). Every entity with a row in those
 * samples gets a cell for the row's hour, even without an interval. Undefined when a key value cannot be spelled
 * as the datastore would (the caller then recomputes the cells in SQL).
 */
export function entityCellFacts(
  probe: ProbeDefinition,
  columns: readonly ProbeColumn[],
  gauges: readonly ProbeColumn[],
  sequence: readonly Sample[],
  first: number,
): EntityCellFacts[] | undefined {
  const cells = new Map<string, EntityCellFacts>();
  const cell = (hour: number, key: string, entity: string[]) => {
    const id = `${hour} ${key}`;
    let found = cells.get(id);
    if (!found) {
      found = {
        hour,
        entity,
        intervals: 0,
        maxSpanMs: null,
        columns: columns.map(() => ({ n: 0, sum: null, ratioSum: null })),
        gauges: gauges.map(noGaugeFacts),
      };
      cells.set(id, found);
    }
    return found;
  };
  const entityOf = (row: Row) => probe.keys.map((k) => keyText(row[k]));
  /** A sample's rows by entity key (JSON), each key spelled once: the next sample looks its rows up here. */
  const byKey = (rows: readonly Row[]) => new Map(rows.map((r) => [JSON.stringify(entityOf(r)), r]));
  let before = first > 0 ? byKey(sequence[first - 1].rows) : new Map<string, Row>();
  for (let i = first; i < sequence.length; i++) {
    const { t, rows } = sequence[i];
    const hour = Math.floor(t / HOUR_MS) * HOUR_MS;
    const part = Math.floor((t - hour) / PART_MS);
    const previous = i > 0 ? sequence[i - 1] : undefined;
    const span = previous ? t - previous.t : 0;
    if (previous) {
      const own = cell(hour, "[]", []);
      own.intervals += 1;
      own.maxSpanMs = Math.max(own.maxSpanMs ?? span, span);
    }
    const current = new Map<string, Row>();
    for (const row of rows) {
      const entity = entityOf(row);
      if (entity.some((k) => k === undefined)) return undefined;
      const key = JSON.stringify(entity);
      current.set(key, row);
      const target = cell(hour, key, entity as string[]);
      for (let g = 0; g < gauges.length; g++) {
        const value = numeric(row[gauges[g].name]);
        if (value === null) continue;
        const facts = target.gauges[g]; // samples come in time order: the last value seen is the latest
        facts.n += 1;
        facts.sum = (facts.sum ?? 0) + value;
        facts.last = value;
        facts.lastAt = t;
        facts.min = Math.min(facts.min ?? value, value);
        facts.max = Math.max(facts.max ?? value, value);
        facts.partMin[part] = Math.min(facts.partMin[part] ?? value, value);
        facts.partMax[part] = Math.max(facts.partMax[part] ?? value, value);
        for (let p = part; p < HOUR_PARTS; p++) {
          facts.partN[p] += 1;
          facts.partSum[p] += value;
          facts.partLastAt[p] = t;
          facts.partLast[p] = value;
        }
      }
      const prior = before.get(key);
      if (!prior) continue; // appeared (or the connection's first sample): a cell, no interval
      target.intervals += 1;
      target.maxSpanMs = Math.max(target.maxSpanMs ?? span, span);
      for (let c = 0; c < columns.length; c++) {
        const column = columns[c];
        const now = numeric(row[column.name]);
        const then = numeric(prior[column.name]);
        if (now === null || then === null || now < then) continue;
        if (column.resetBy && !sameMarker(row[column.resetBy], prior[column.resetBy])) continue;
        const facts = target.columns[c];
        facts.n += 1;
        facts.sum = (facts.sum ?? 0) + (now - then);
        facts.ratioSum = (facts.ratioSum ?? 0) + (now - then) / span;
      }
    }
    before = current;
  }
  return [...cells.values()];
}
