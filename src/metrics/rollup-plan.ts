/**
 * Which parts of a window a query reads from time rollups and which raw (rows or per-sample changes), pure.
 * A rollup cell (5 minutes or 1 hour, aligned to the epoch) is used only when all of it lies in one bucket,
 * so a bucket's numbers are the same whichever way its samples are read; the rest of each bucket is raw.
 */
import { type Buckets, bucketOf } from "./buckets.ts";

export const ROLLUP_CELLS_MS = [3_600_000, 300_000] as const;
/** Entity cells are hourly only: finer cells per entity would cost about what the raw rows do. */
export const ENTITY_CELLS_MS = [3_600_000] as const;
/** ...but keep facts of gauges over the hour's 5-minute parts, read as runs of parts (hourParts). */
export const ENTITY_PART_CELLS_MS = [3_600_000, 300_000] as const;

export interface RollupPlan {
  /**
   * Whole cells to read, with the bucket they fall in; `parts`: only the hour's 5-minute parts from..to-1
   * (0-based), of a cell that keeps facts over them (hourParts).
   */
  cells: Array<{ levelSeconds: number; start: number; k: number; parts?: [number, number] }>;
  /**
   * Time ranges [from, to) to read raw, with the bucket they fall in; `minus`: the bucket holding the rest of the
   * cell around the range, which reads the whole cell less this range (planComplementReads).
   */
  raw: Array<{ from: number; to: number; k: number; minus?: number }>;
  /** Share of the window not read raw (0..1). */
  covered: number;
}

/** The first integer millisecond at or after `guess` that falls in a bucket after k. */
function bucketEnd(b: Buckets, k: number): number {
  if (k >= b.n - 1) return b.end;
  let t = Math.ceil(b.start + (k + 1) * b.width);
  while (t - 1 >= b.start && bucketOf(b, t - 1) > k) t--;
  while (bucketOf(b, t) <= k) t++;
  return t;
}

/** The first integer millisecond in bucket k. */
export const firstInstant = (b: Buckets, k: number): number => (k === 0 ? b.start : bucketEnd(b, k - 1));

/**
 * Splits each bucket's span into whole cells, coarsest first, and raw ranges. Before `completeFrom` (epoch ms;
 * rollups of older samples may be incomplete) everything is raw. The window's end instant is bucket n, raw.
 */
export function planRollupReads(b: Buckets, completeFrom: number, sizes: readonly number[] = ROLLUP_CELLS_MS): RollupPlan {
  const plan: RollupPlan = { cells: [], raw: [], covered: 0 };
  let coveredMs = 0;
  const cover = (from: number, to: number, k: number, sizes: readonly number[]) => {
    if (from >= to) return;
    const [size, ...finer] = sizes;
    if (size === undefined) {
      plan.raw.push({ from, to, k });
      return;
    }
    const first = Math.ceil(from / size) * size;
    const last = Math.floor(to / size) * size;
    if (first >= last) return cover(from, to, k, finer);
    cover(from, first, k, finer);
    for (let t = first; t < last; t += size) plan.cells.push({ levelSeconds: size / 1000, start: t, k });
    coveredMs += last - first;
    cover(last, to, k, finer);
  };
  let lo = b.start;
  for (let k = 0; k < b.n; k++) {
    const hi = bucketEnd(b, k);
    const split = Math.min(hi, Math.max(lo, completeFrom));
    cover(lo, split, k, []);
    cover(split, hi, k, sizes);
    lo = hi;
  }
  plan.raw.push({ from: b.end, to: b.end + 1, k: b.n });
  plan.covered = b.end > b.start ? coveredMs / (b.end - b.start) : 0;
  return plan;
}

/**
 * A plan's reads and the span [from, b.start) before the window, as one more bucket (k = -1): its whole cells and
 * the raw rest, planned as `plan` was (with `subtract` or not). The span's end instant is the window's start, read
 * by the plan already.
 */
export function withSpanBefore(
  plan: RollupPlan,
  b: Buckets,
  from: number,
  completeFrom: number,
  { subtract = false, sizes = ROLLUP_CELLS_MS }: { subtract?: boolean; sizes?: readonly number[] } = {},
): RollupPlan {
  const span: Buckets = { start: from, end: b.start, n: 1, width: b.start - from };
  if (span.width <= 0) return plan;
  const before = subtract ? planComplementReads(span, completeFrom, sizes) : planRollupReads(span, completeFrom, sizes);
  const earlier = (k: number | undefined) => (k === undefined ? undefined : -1);
  return {
    cells: [...before.cells.map((c) => ({ ...c, k: -1 })), ...plan.cells],
    raw: [...before.raw.filter((r) => r.k === 0).map((r) => ({ ...r, k: -1, minus: earlier(r.minus) })), ...plan.raw],
    covered: plan.covered,
  };
}

/** Narrower buckets gain little from cells (reading them costs about what the raw rows do). */
export const MIN_ROLLUP_BUCKET_MS = 30 * 60_000;
/** Below this share of the window in whole cells, raw rows are read as before. */
export const MIN_COVERED_SHARE = 0.5;

/**
 * The plan of a query whose buckets are wide enough and mostly whole cells (at least `minCovered` of the window
 * not read raw); undefined when raw reads are as good. `subtract`: cut cells are read whole less their smaller
 * parts (planComplementReads), for queries that need only counts and sums.
 */
export function rollupPlanFor(
  b: Buckets,
  completeFrom: number,
  sizes: readonly number[] = ROLLUP_CELLS_MS,
  { subtract = false, minCovered = MIN_COVERED_SHARE }: { subtract?: boolean; minCovered?: number } = {},
): RollupPlan | undefined {
  if (b.width < MIN_ROLLUP_BUCKET_MS) return undefined;
  const plan = subtract ? planComplementReads(b, completeFrom, sizes) : planRollupReads(b, completeFrom, sizes);
  return plan.covered >= minCovered ? plan : undefined;
}

/** Whether an aggregation needs only counts and sums of a bucket's values (so cut cells can be subtracted). */
export const needsOnlySums = (aggregation: string): boolean => aggregation === "avg" || aggregation === "sum";

/**
 * planRollupReads that also reads the cells that bucket edges cut: a cell inside one bucket is read whole; a cut
 * one is split into cells of the next size, and at the finest size its largest part (the later one on a tie) is
 * read as the whole cell less its other parts, which are read raw once, for their own bucket and subtracted from
 * the largest part's. Only for facts that subtract exactly (counts and sums): such a bucket's extremes and latest
 * value are not its own. Before `completeFrom` everything is raw.
 */
export function planComplementReads(b: Buckets, completeFrom: number, sizes: readonly number[]): RollupPlan {
  const plan: RollupPlan = { cells: [], raw: [], covered: 0 };
  let rawMs = 0;
  const visit = (cell: number, [size, ...finer]: readonly number[]) => {
    const lo = Math.max(cell, b.start);
    const hi = Math.min(cell + size, b.end);
    const parts: Array<{ from: number; to: number; k: number }> = [];
    for (let from = lo, k = bucketOf(b, lo); from < hi; k++) {
      const to = Math.min(hi, bucketEnd(b, k));
      if (to > from) parts.push({ from, to, k });
      from = Math.max(from, to);
    }
    if (parts.length === 0) return;
    const whole = lo === cell && hi === cell + size && cell >= completeFrom;
    if (whole && parts.length === 1) {
      plan.cells.push({ levelSeconds: size / 1000, start: cell, k: parts[0].k });
      return;
    }
    if (finer.length > 0) {
      for (let sub = cell; sub < cell + size; sub += finer[0]) visit(sub, finer);
      return;
    }
    const kept = whole ? parts.reduce((a, p) => (p.to - p.from >= a.to - a.from ? p : a)) : undefined;
    if (kept) plan.cells.push({ levelSeconds: size / 1000, start: cell, k: kept.k });
    for (const p of parts) {
      if (p === kept) continue;
      plan.raw.push(kept ? { ...p, minus: kept.k } : p);
      rawMs += p.to - p.from;
    }
  };
  for (let cell = Math.floor(b.start / sizes[0]) * sizes[0]; cell < b.end; cell += sizes[0]) visit(cell, sizes);
  plan.raw.push({ from: b.end, to: b.end + 1, k: b.n });
  plan.covered = b.end > b.start ? 1 - rawMs / (b.end - b.start) : 0;
  return plan;
}

/**
 * A plan of hourly and 5-minute cells (ENTITY_PART_CELLS_MS) for cells that are hourly rows with facts over
 * their twelve 5-minute parts: each run of 5-minute cells of one hour in one bucket becomes that hour's cell read
 * for those parts.
 */
export function hourParts(plan: RollupPlan): RollupPlan {
  const [HOUR, PART] = ENTITY_PART_CELLS_MS;
  const cells: RollupPlan["cells"] = [];
  for (const c of plan.cells) {
    if (c.levelSeconds * 1000 !== PART) {
      cells.push(c);
      continue;
    }
    const hour = Math.floor(c.start / HOUR) * HOUR;
    const part = (c.start - hour) / PART;
    const last = cells[cells.length - 1];
    if (last?.parts && last.start === hour && last.k === c.k && last.parts[1] === part) last.parts = [last.parts[0], part + 1];
    else cells.push({ levelSeconds: HOUR / 1000, start: hour, k: c.k, parts: [part, part + 1] });
  }
  return { ...plan, cells };
}
