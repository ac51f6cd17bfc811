/**
 * Random sample histories for the property tests of the query paths: entities appearing and vanishing, resets
 * with and without markers, unmarked drops, nulls, irregular spacing; written through the sample writer in
 * random contiguous batches in random order.
 */
import { writeSamples } from "../../src/samples/sample-writer.ts";
import type { TestDatastore } from "./datastore.ts";
import { seededRandom } from "./seeded-random.ts";

export function random(seed: number) {
  const next = seededRandom(seed);
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] };
}

export const T0 = Date.parse("2026-03-01T00:00:00Z");
export const SPACINGS = [60, 60, 60, 60, 60, 30, 90, 120, 1, 300, 1200, 2400, 5400];

export type Rng = ReturnType<typeof random>;

/** `samples` and `spacings` (seconds) default to a short, irregular history. */
export function history(rng: Rng, spec: Case, samples = rng.int(20, 90), spacings: readonly number[] = SPACINGS) {
  const { entities, key: entityKey, columns, marker } = spec;
  const rows: Array<Record<string, unknown>> = [];
  const state = new Map<string, { values: Record<string, number>; reset: string | null }>();
  let t = T0 + rng.int(0, 59) * 1000;
  for (let s = 0; s < samples; s++) {
    for (const e of entities) {
      if (!spec.steady?.includes(e) && rng.next() < 0.12) {
        state.delete(e); // vanishes this sample (may come back with a new total)
        continue;
      }
      const cur = state.get(e) ?? { values: Object.fromEntries(Object.keys(columns).map((c) => [c, rng.int(0, 5000)])), reset: null };
      const roll = rng.next();
      if (marker && roll < 0.06) cur.reset = new Date(t - 1000).toISOString(); // marked reset; counters may rise past old values
      for (const [c, kind] of Object.entries(columns)) {
        if (roll < 0.06 && rng.next() < 0.5) cur.values[c] += rng.int(1, 3000);
        else if (roll < 0.1)
          cur.values[c] = rng.int(0, 50); // unmarked drop
        else cur.values[c] += kind === "quarter" ? rng.int(0, 4000) / 4 : rng.int(0, 300);
      }
      state.set(e, cur);
      const row: Record<string, unknown> = { collected_at: new Date(t).toISOString(), ...spec.fixed, [entityKey]: e };
      for (const c of Object.keys(columns)) row[c] = rng.next() < 0.04 ? null : cur.values[c];
      if (marker) row[marker] = cur.reset;
      rows.push(row);
    }
    t += rng.pick(spacings) * 1000;
  }
  return rows;
}

/** Writes the rows in random contiguous batches, in random batch order (`inOrder`: oldest first, as a collector appends). */
export async function writeShuffled(
  store: TestDatastore,
  rng: Rng,
  connectionId: number,
  probe: string,
  rows: Array<Record<string, unknown>>,
  maxBatch = 15,
  inOrder = false,
) {
  const byTime = new Map<string, typeof rows>();
  for (const r of rows) byTime.set(r.collected_at as string, [...(byTime.get(r.collected_at as string) ?? []), r]);
  const times = [...byTime.keys()];
  const batches: string[][] = [];
  for (let i = 0; i < times.length; ) {
    const n = rng.int(1, maxBatch);
    batches.push(times.slice(i, i + n));
    i += n;
  }
  for (let i = batches.length - 1; i > 0 && !inOrder; i--) {
    const j = rng.int(0, i);
    [batches[i], batches[j]] = [batches[j], batches[i]];
  }
  for (const batch of batches) await writeSamples(store.db, { connectionId, probe, rows: batch.flatMap((t) => byTime.get(t)!) as never });
}

export interface Case {
  probe: string;
  key: string;
  entities: string[];
  columns: Record<string, "int" | "quarter">;
  marker?: string;
  metrics: string[];
  /** Key values every row shares. */
  fixed?: Record<string, string>;
  filter?: Record<string, string>;
  /** Entities in every sample. */
  steady?: string[];
}
