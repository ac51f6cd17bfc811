/** planRollupReads, pure: every instant of the window is read exactly once, from a cell or raw, in its own bucket. */
import { describe, expect, it } from "vitest";
import { bucketOf, layoutBuckets } from "../../src/metrics/buckets.ts";
import { cellRuns, pairedRanges } from "../../src/samples/read-rollup-cells.ts";
import { ENTITY_PART_CELLS_MS, hourParts, planComplementReads, planRollupReads, withSpanBefore } from "../../src/metrics/rollup-plan.ts";
import { seededRandom } from "../support/seeded-random.ts";

describe("planRollupReads", () => {
  it("covers each instant once, in the bucket that holds it, with whole aligned cells only before no completeFrom", () => {
    const next = seededRandom(7);
    for (let round = 0; round < 200; round++) {
      const start = Date.parse("2026-03-01T00:00:00Z") + Math.floor(next() * 86_400_000);
      const end = start + 60_000 + Math.floor(next() * 10 * 86_400_000);
      const b = layoutBuckets(start, end, 60, [1, 2, 7, 20, 150, 500][Math.floor(next() * 6)]);
      const completeFrom = next() < 0.5 ? Number.NEGATIVE_INFINITY : start + Math.floor(next() * (end - start));
      const plan = planRollupReads(b, completeFrom);
      const pieces = [
        ...plan.cells.map((c) => ({ from: c.start, to: c.start + c.levelSeconds * 1000, k: c.k, cell: c.levelSeconds })),
        ...plan.raw.map((r) => ({ ...r, cell: 0 })),
      ].sort((x, y) => x.from - y.from);
      // Contiguous from the window start to just past its end, each piece inside one bucket.
      expect(pieces[0].from).toBe(start);
      expect(pieces.at(-1)!.to).toBe(end + 1);
      for (let i = 0; i < pieces.length; i++) {
        const p = pieces[i];
        if (i > 0) expect(p.from).toBe(pieces[i - 1].to);
        expect(p.from).toBeLessThan(p.to);
        expect([bucketOf(b, p.from), bucketOf(b, p.to - 1)]).toEqual([p.k, p.k]);
        if (p.cell) {
          expect(p.from % (p.cell * 1000)).toBe(0);
          expect(p.from).toBeGreaterThanOrEqual(completeFrom);
        }
      }
      // Each bucket starts where the previous one ends: its first instant is in it, the one before is not.
      for (const p of pieces) if (p.from > start && bucketOf(b, p.from - 1) !== p.k) expect(bucketOf(b, p.from - 1)).toBe(p.k - 1);
      const covered = plan.cells.reduce((sum, c) => sum + c.levelSeconds * 1000, 0) / (end - start);
      expect(plan.covered).toBeCloseTo(covered, 12);
    }
  });

  it("uses hours where whole hours fit, 5-minute cells around them, raw rows at the edges", () => {
    const start = Date.parse("2026-03-01T00:02:30Z");
    const plan = planRollupReads(layoutBuckets(start, start + 3 * 3_600_000, 60, 1), Number.NEGATIVE_INFINITY);
    expect(plan.cells.filter((c) => c.levelSeconds === 3600).map((c) => new Date(c.start).toISOString())).toEqual([
      "2026-03-01T01:00:00.000Z",
      "2026-03-01T02:00:00.000Z",
    ]);
    expect(plan.cells.filter((c) => c.levelSeconds === 300)).toHaveLength(11);
    expect(plan.raw.map((r) => [new Date(r.from).toISOString(), r.to - r.from])).toEqual([
      ["2026-03-01T00:02:30.000Z", 150_000],
      ["2026-03-01T03:00:00.000Z", 150_000],
      ["2026-03-01T03:02:30.000Z", 1],
    ]);
  });
});

describe("cellRuns", () => {
  const H = 3_600_000;
  const F = 300_000;
  it("reads the cells that follow each other at one level in one bucket as one run, cut only at its ends", () => {
    const cells = [
      { levelSeconds: 300, start: 10 * H - 2 * F, k: 0 },
      { levelSeconds: 300, start: 10 * H - F, k: 0 },
      { levelSeconds: 3600, start: 10 * H, k: 0 }, // another level
      { levelSeconds: 3600, start: 11 * H, k: 0 },
      { levelSeconds: 3600, start: 12 * H, k: 1 }, // another bucket
      { levelSeconds: 3600, start: 14 * H, k: 1 }, // not next to the last
      { levelSeconds: 3600, start: 15 * H, k: 1, parts: [0, 6] as [number, number] }, // cut at its end: ends the run
      { levelSeconds: 3600, start: 16 * H, k: 1 },
      { levelSeconds: 3600, start: 17 * H, k: 2, parts: [4, 12] as [number, number] }, // cut at its start: starts one
      { levelSeconds: 3600, start: 18 * H, k: 2 },
      { levelSeconds: 3600, start: 19 * H, k: 2, parts: [0, 3] as [number, number] },
      { levelSeconds: 3600, start: 20 * H, k: 3, parts: [2, 5] as [number, number] }, // cut at both
    ];
    const whole = { partFrom: 0, partTo: 12 };
    expect(cellRuns(cells)).toEqual([
      { levelSeconds: 300, start: 10 * H - 2 * F, end: 10 * H, k: 0, ...whole },
      { levelSeconds: 3600, start: 10 * H, end: 12 * H, k: 0, ...whole },
      { levelSeconds: 3600, start: 12 * H, end: 13 * H, k: 1, ...whole },
      { levelSeconds: 3600, start: 14 * H, end: 16 * H, k: 1, partFrom: 0, partTo: 6 },
      { levelSeconds: 3600, start: 16 * H, end: 17 * H, k: 1, ...whole },
      { levelSeconds: 3600, start: 17 * H, end: 20 * H, k: 2, partFrom: 4, partTo: 3 },
      { levelSeconds: 3600, start: 20 * H, end: 21 * H, k: 3, partFrom: 2, partTo: 5 },
    ]);
  });

  it("covers exactly the plan's cells and parts, each in its bucket, on random plans", () => {
    const next = seededRandom(11);
    for (let round = 0; round < 100; round++) {
      const start = Date.parse("2026-03-01T00:00:00Z") + Math.floor(next() * 86_400_000);
      const b = layoutBuckets(start, start + 60_000 + Math.floor(next() * 10 * 86_400_000), 60, [1, 7, 150][Math.floor(next() * 3)]);
      for (const plan of [planRollupReads(b, Number.NEGATIVE_INFINITY), hourParts(planRollupReads(b, Number.NEGATIVE_INFINITY, ENTITY_PART_CELLS_MS))]) {
        const cellsOf = cellRuns(plan.cells).flatMap((run) => {
          const size = run.levelSeconds * 1000;
          const n = (run.end - run.start) / size;
          return Array.from({ length: n }, (_, i) => {
            const parts: [number, number] = [i === 0 ? run.partFrom : 0, i === n - 1 ? run.partTo : 12];
            return { levelSeconds: run.levelSeconds, start: run.start + i * size, k: run.k, ...(parts[0] === 0 && parts[1] === 12 ? {} : { parts }) };
          });
        });
        expect(cellsOf).toEqual(plan.cells);
      }
    }
  });
});

describe("pairedRanges", () => {
  it("reads two raw ranges that meet as one, split where they met, and leaves the others alone", () => {
    const raw = [
      { from: 0, to: 10, k: 0 },
      { from: 10, to: 25, k: 1 },
      { from: 40, to: 50, k: 1 },
      { from: 50, to: 60, k: 2 },
      { from: 60, to: 61, k: 3 },
      { from: 70, to: 80, k: 3 },
    ];
    expect(pairedRanges(raw)).toEqual([
      { lo: 0, split: 10, hi: 25, k: 0, kAfter: 1 },
      { lo: 40, split: 50, hi: 60, k: 1, kAfter: 2 },
      { lo: 60, split: 61, hi: 61, k: 3, kAfter: 3 },
      { lo: 70, split: 80, hi: 80, k: 3, kAfter: 3 },
    ]);
  });

  it("keeps every instant of a plan's raw ranges in its own bucket, subtracted from the bucket its range names", () => {
    const next = seededRandom(11);
    for (let round = 0; round < 100; round++) {
      const start = Date.parse("2026-03-01T00:00:00Z") + Math.floor(next() * 86_400_000);
      const b = layoutBuckets(start, start + Math.floor(next() * 10 * 86_400_000) + 60_000, 60, 150);
      for (const plan of [
        planRollupReads(b, Number.NEGATIVE_INFINITY),
        planComplementReads(b, Number.NEGATIVE_INFINITY, [3_600_000]),
        planComplementReads(b, Number.NEGATIVE_INFINITY, [3_600_000, 300_000]),
      ]) {
        // The bucket each instant falls in, and the one it is subtracted from.
        const bucketsAt = (t: number) =>
          pairedRanges(plan.raw)
            .map((p) => (t >= p.lo && t < p.hi ? (t < p.split ? [p.k, p.minus] : [p.kAfter, p.minusAfter]) : undefined))
            .find((k) => k !== undefined);
        for (const r of plan.raw) for (const t of [r.from, r.to - 1, Math.floor((r.from + r.to) / 2)]) expect(bucketsAt(t)).toEqual([r.k, r.minus]);
      }
    }
  });

  it("reading cells less their parts counts each instant once, in its own bucket, and reads less raw", () => {
    const next = seededRandom(13);
    const HOUR = 3_600_000;
    for (let round = 0; round < 200; round++) {
      const start = Date.parse("2026-03-01T00:00:00Z") + Math.floor(next() * 86_400_000);
      const end = start + 60_000 + Math.floor(next() * 10 * 86_400_000);
      const b = layoutBuckets(start, end, 60, [1, 2, 7, 20, 150, 500][Math.floor(next() * 6)]);
      const completeFrom = next() < 0.5 ? Number.NEGATIVE_INFINITY : start + Math.floor(next() * (end - start));
      const sizes = next() < 0.5 ? [HOUR] : [HOUR, 300_000];
      const plan = planComplementReads(b, completeFrom, sizes);
      // What each piece adds to each bucket at instant t: a cell to its bucket, a raw range to its own and, when it
      // is a cell's part read raw, minus that to the bucket reading the cell.
      const counted = (t: number) => {
        const net = new Map<number, number>();
        const add = (k: number, n: number) => net.set(k, (net.get(k) ?? 0) + n);
        for (const c of plan.cells) if (t >= c.start && t < c.start + c.levelSeconds * 1000) add(c.k, 1);
        for (const r of plan.raw) {
          if (t < r.from || t >= r.to) continue;
          add(r.k, 1);
          if (r.minus !== undefined) add(r.minus, -1);
        }
        return [...net].filter(([, n]) => n !== 0);
      };
      const instants = [start, end, end - 1, ...Array.from({ length: 30 }, () => start + Math.floor(next() * (end - start)))];
      for (const c of plan.cells) instants.push(c.start, c.start + c.levelSeconds * 1000 - 1);
      for (const r of plan.raw) instants.push(r.from, r.to - 1);
      for (const t of instants) if (t <= end) expect({ t, net: counted(t) }).toEqual({ t, net: [[bucketOf(b, t), 1]] });
      const finest = sizes[sizes.length - 1];
      for (const c of plan.cells) {
        const size = c.levelSeconds * 1000;
        expect([sizes.includes(size), c.start % size, c.start >= completeFrom, c.start >= start, c.start + size <= end]).toEqual([true, 0, true, true, true]);
      }
      // A part read raw is never the larger part of its cell, so at most half of each cut cell is read raw.
      for (const r of plan.raw) if (r.minus !== undefined) expect(r.to - r.from).toBeLessThanOrEqual(finest / 2);
      const rawMs = plan.raw.reduce((sum, r) => sum + Math.min(r.to, end) - r.from, 0);
      expect(plan.covered).toBeCloseTo(1 - rawMs / (end - start), 12);
      expect(plan.covered).toBeGreaterThanOrEqual(planRollupReads(b, completeFrom, sizes).covered - 1e-12);
    }
  });
});

describe("withSpanBefore", () => {
  it("adds the span before the window once, as bucket -1, and leaves the window's plan as it was", () => {
    const next = seededRandom(11);
    for (let round = 0; round < 200; round++) {
      const start = Date.parse("2026-03-01T00:00:00Z") + Math.floor(next() * 86_400_000);
      const b = layoutBuckets(start, start + 3_600_000 + Math.floor(next() * 5 * 86_400_000), 60, 150);
      const from = start - 60_000 - Math.floor(next() * 86_400_000);
      const subtract = next() < 0.5;
      const completeFrom = next() < 0.5 ? Number.NEGATIVE_INFINITY : from + Math.floor(next() * (start - from));
      const plan = subtract ? planComplementReads(b, completeFrom, [3_600_000, 300_000]) : planRollupReads(b, completeFrom);
      const spanned = withSpanBefore(plan, b, from, completeFrom, { subtract });
      const before = [
        ...spanned.cells.filter((c) => c.k === -1).map((c) => ({ from: c.start, to: c.start + c.levelSeconds * 1000 })),
        ...spanned.raw.filter((r) => r.k === -1).map((r) => ({ from: r.from, to: r.to })),
      ].sort((x, y) => x.from - y.from);
      // Contiguous from `from` to the window's start, each instant once; cells only from completeFrom.
      expect(before[0].from).toBe(from);
      expect(before.at(-1)!.to).toBe(start);
      for (let i = 1; i < before.length; i++) expect(before[i].from).toBe(before[i - 1].to);
      for (const c of spanned.cells.filter((x) => x.k === -1)) expect(c.start).toBeGreaterThanOrEqual(completeFrom);
      expect(spanned.raw.filter((r) => r.k === -1).every((r) => r.minus === undefined)).toBe(true);
      expect({ cells: spanned.cells.filter((c) => c.k >= 0), raw: spanned.raw.filter((r) => r.k >= 0), covered: spanned.covered }).toEqual(plan);
    }
  });
});
