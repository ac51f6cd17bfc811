/**
 * The writer differences every cumulative column of a sample batch at once (intervalsForColumns); each column's
 * intervals must be what differencing that column alone gives (intervalsFor, the pipeline's), whatever the
 * other columns do: values missing or dropping in one column only, statistics resets, entities appearing and
 * vanishing.
 */
import { describe, expect, it } from "vitest";
import { intervalsFor, intervalsForColumns } from "../../src/metrics/intervals.ts";
import type { Sample } from "../../src/metrics/samples.ts";
import { findProbe } from "../../src/probes/index.ts";
import { seededRandom } from "../support/seeded-random.ts";

const probe = findProbe("pg_stat_database")!;
const COLUMNS = ["xact_commit", "xact_rollback", "blks_read", "blk_read_time"];

function history(seed: number): Sample[] {
  const rng = seededRandom(seed);
  const totals = new Map<string, number[]>();
  const resets = new Map<string, string | null>();
  return Array.from({ length: 60 }, (_, i) => ({
    t: i * 60_000,
    rows: ["a", "b", "c", "d"]
      .filter(() => rng() > 0.1) // an entity missing from a sample
      .map((db) => {
        if (rng() < 0.05) resets.set(db, new Date(i * 60_000).toISOString()); // a marked reset
        const before = totals.get(db) ?? COLUMNS.map(() => 0);
        const now = before.map((v) => (rng() < 0.05 ? rng() * 10 : v + Math.floor(rng() * 100) + rng())); // an unmarked drop in one column
        totals.set(db, now);
        return { database_name: db, stats_reset: resets.get(db) ?? null, ...Object.fromEntries(COLUMNS.map((c, k) => [c, rng() < 0.05 ? null : now[k]])) };
      }),
  }));
}

describe("intervals of several columns at once", () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])("seed %i: each column's as differenced alone", (seed) => {
    const samples = history(seed);
    const together = intervalsForColumns(probe, COLUMNS, samples);
    COLUMNS.forEach((column, c) => expect(together[c], column).toEqual(intervalsFor(probe, column, samples)));
    // The histories have what the rules are about: valid changes, and intervals with none.
    expect(together.flat().some((x) => x.change === null)).toBe(true);
    expect(together.flat().some((x) => (x.change ?? 0) > 0)).toBe(true);
  });
});
