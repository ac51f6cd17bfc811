/**
 * Grouped counter changes without reading every sample: an entity's change over a run of consecutive plain-growth
 * intervals is the difference of its cumulative values at the run's two ends, and the sample writer records the
 * few intervals that are not plain growth with their valid changes (metrics/irregular-intervals.ts). So a window
 * reads the per-sample sequence (or, evenly spaced, the few facts that show it), those exceptions and the rows at
 * a handful of sample times, instead of every entity row with a window function over them (grouped-changes.ts,
 * which stays the fallback and the reference this is property-tested against).
 *
 * Not applicable (undefined) when: the probe has no entity keys; grouping or filters name non-key columns; some
 * sample in range was written before the writer recorded irregular intervals; or the exceptions, or (for rates,
 * whose runs end where the interval length changes) the lengths, are so many that the sample times to read
 * approach the samples themselves.
 */
import type { Queryable } from "../../drivers/types.ts";
import { bucketOf } from "../metrics/buckets.ts";
import { median } from "../metrics/samples.ts";
import { borrowLimitMs } from "../metrics/series.ts";
import { changesTableName, irregularTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import { firstInstant } from "../metrics/rollup-plan.ts";
import { type ChangeSequence, type EvenChanges, type SpacedSequence, epochMsSql } from "./read-changes.ts";
import { type SpacedRead, readSpaced } from "./read-spaced-changes.ts";
import { GAP_INTERVALS, type Intervals, type Run, evenIntervals, intervalsByEnd, lastAtMost, runsOf, segmentIntervals } from "./difference-runs.ts";
import type { GroupedChangeQuery, GroupedChanges } from "./grouped-change-query.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";
import { samplesSql } from "../probes/history-ddl.ts";

/**
 * Tuning, not correctness: above `maxTimesShare` of the counted intervals, reading the rows at the needed sample
 * times saves little.
 */
export const DIFFERENCING = { maxTimesShare: 0.5 };

/** A row read, its sample time as epoch milliseconds. */
type Row = Record<string, unknown> & { collected_at: number };

/**
 * The recorded changes in range in time order, as their times (`to`) and their previous samples' (`from`), or as
 * EvenChanges where they are evenly spaced; where `spaced` (readSpaced, asked first) shows them, not read, and
 * only so where `onlyEven`. Undefined when a sample in range was written before the writer recorded irregular intervals.
 */
async function changeTimes(
  db: Queryable,
  q: GroupedChangeQuery,
  from: number,
  spaced?: SpacedRead,
): Promise<ChangeSequence | EvenChanges | SpacedSequence | undefined> {
  const to = q.buckets.end;
  if (spaced) {
    if (spaced.changes) return spaced.changes;
    // Tuning: rates need runs of one interval length, so unevenly spaced intervals make runs of one each and the rows
    // at their ends are about every sample's; the other paths answer without the sequence read first (a jittered week: 8 ms).
    if (q.rates && q.buckets.width >= 2 * q.intervalSeconds * 1000) return undefined;
  }
  if (q.onlyEven) return undefined;
  const sequence = await db.query<{ collected_at: number; prev_collected_at: number; entities_checked: boolean | null }>(
    `SELECT ${epochMsSql("collected_at")}, ${epochMsSql("prev_collected_at")}, entities_checked FROM ${probeTable(changesTableName(q.probe.name))}
      WHERE connection_id = $1 AND collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz`,
    [q.connectionId, new Date(from).toISOString(), new Date(to).toISOString()],
  );
  if (sequence.some((s) => s.entities_checked !== true)) return undefined;
  // Sorted here, and only when needed: the rows mostly arrive in time order (weekly partitions written in order),
  // and the datastore's sort was a third of a month's read.
  if (sequence.some((s, i) => i > 0 && s.collected_at < sequence[i - 1].collected_at)) sequence.sort((x, y) => x.collected_at - y.collected_at);
  return { to: sequence.map((s) => s.collected_at), from: sequence.map((s) => s.prev_collected_at) };
}

/**
 * The first sample in range and the counted intervals (ending in the window, starting at or after `borrowFrom`, not
 * gaps), or undefined where changeTimes is; `spaced`: what readSpaced read, if it was asked.
 */
async function countedIntervals(
  db: Queryable,
  q: GroupedChangeQuery,
  borrowFrom: number,
  spaced?: SpacedRead,
): Promise<{ first: number; intervals: Intervals } | undefined> {
  const b = q.buckets;
  const read = await changeTimes(db, q, borrowFrom, spaced);
  if (!read) return undefined;
  if ("spacing" in read) return evenIntervals(read, b, q.intervalSeconds * 1000, borrowFrom);
  if ("segments" in read) return segmentIntervals(read.segments, b, q.intervalSeconds * 1000, borrowFrom);
  // Plain loops: a month holds tens of thousands of samples, and allocation was most of this read's time.
  const inWindow: number[] = [];
  let first = read.to[0] ?? Number.NaN;
  let firstFound = false;
  for (let i = 0; i < read.to.length; i++) {
    const from = read.from[i];
    if (from < borrowFrom) continue;
    if (!firstFound) [first, firstFound] = [from, true];
    if (from >= b.start) inWindow.push(read.to[i] - from);
  }
  const judged = Math.max(q.intervalSeconds * 1000, median(inWindow) ?? 0);
  const [froms, tos, buckets]: number[][] = [[], [], []];
  for (let i = 0; i < read.to.length; i++) {
    const from = read.from[i];
    const to = read.to[i];
    if (from < borrowFrom || to < b.start || to - from > GAP_INTERVALS * judged) continue;
    froms.push(from);
    tos.push(to);
    buckets.push(bucketOf(b, to));
  }
  return { first, intervals: { length: tos.length, from: (i) => froms[i], to: (i) => tos[i], bucket: (i) => buckets[i] } };
}

/** Per column, indexed by bucket (0..n): arrays, since every entity adds to most buckets (Maps cost twice the time). */
interface GroupState {
  group: string[];
  /** The summed change; undefined where no valid change ended (read as null, as a bucket without one is). */
  delta: Array<Array<number | undefined>>;
  /** The sum of per-interval rates, and the intervals with a valid change (by `to`). */
  rateSum: Float64Array[];
  valid: Array<Map<number, Set<number>>>;
  /** A group of one entity counts its valid intervals instead of collecting them (none is seen twice). */
  single: boolean;
  validCount: Int32Array[];
}

export interface DifferencedChanges {
  groups: GroupedChanges[];
  /** Every group with a row in range (the borrow span included), changes or not. */
  allGroups: string[][];
  /** The counted intervals in runs, in time order. */
  runs: Run[];
  /**
   * The groups whose entities are in every sample read (none appeared or vanished: each has a row at the first
   * sample and no exception without a valid change), whose series are also the series of a filter naming them.
   */
  steadyGroups: string[][];
}

export async function differencedGroupChanges(db: Queryable, q: GroupedChangeQuery): Promise<GroupedChanges[] | undefined> {
  return (await differencedChanges(db, q))?.groups;
}

export async function differencedChanges(db: Queryable, q: GroupedChangeQuery): Promise<DifferencedChanges | undefined> {
  const keys = q.probe.keys;
  const filters = Object.entries(q.filters ?? {});
  if (keys.length === 0 || !q.groupBy.every((c) => keys.includes(c)) || !filters.every(([c]) => keys.includes(c))) return undefined;
  // Many buckets no wider than the collection interval hold about one interval each, so the rows at run ends
  // would be about every sample's (the share test below fails): raw rows answer, without reading the sequence to
  // learn it (a few such buckets stay under the test's floor of 8 sample times).
  if (q.buckets.width <= q.intervalSeconds * 1000 && q.buckets.n > 16) return undefined;
  // Where the change cells can tell it, whether the samples are spaced by the interval is asked first, in one
  // statement with the rows it will likely need: their sequence is then not read (a month of minutes: 26 -> 2 ms in
  // the lab), and a few samples cost one statement rather than three (about a millisecond more here, far less than
  // two round trips to a remote datastore).
  const b = q.buckets;
  const borrowFrom = b.start - borrowLimitMs(b);
  // Each bucket's first instant, and the window's end instant (its own point, bucket n): a run ends at the last
  // sample before each, which matters where a sample lies on the end (a window ending on a whole minute).
  const edges = [...Array.from({ length: b.n }, (_, k) => firstInstant(b, k)), b.end];
  const spaced =
    q.cellsFrom !== undefined
      ? await readSpaced(db, { ...q, filters }, { from: borrowFrom, to: b.end, cellsFrom: q.cellsFrom }, q.intervalSeconds * 1000, edges)
      : undefined;
  const counted = await countedIntervals(db, q, borrowFrom, spaced);
  if (!counted) return undefined;
  const { first, intervals } = counted;
  if (intervals.length === 0) return { groups: [], allGroups: [], runs: [], steadyGroups: [] };
  const read = spaced?.changes ? spaced : undefined;

  // Both reads take the connection and the filters as $1.. and add their own parameters after them.
  const common: unknown[] = [q.connectionId, ...filters.map(([, v]) => v)];
  const filterSql = filters.map(([c], i) => ` AND ${quoteIdent(c)} = $${i + 2}`).join("");
  const next = (params: unknown[], value: unknown) => `$${params.push(value)}`;
  const select = [epochMsSql("collected_at"), ...keys.map((k) => `${quoteIdent(k)}::text AS ${quoteIdent(k)}`), ...q.columns.map(quoteIdent)].join(", ");
  const byEnd = intervalsByEnd(intervals);
  // Every exception in range (those of uncounted intervals only name entities that were there), the counted ones applied.
  const irregularParams = [...common];
  const irregular = read
    ? read.irregular.filter((r) => r.collected_at > first)
    : await db.query<Row>(
        `SELECT ${select} FROM ${probeTable(irregularTableName(q.probe.name))}
          WHERE connection_id = $1${filterSql} AND collected_at > ${next(irregularParams, new Date(first).toISOString())}::timestamptz
            AND collected_at <= ${next(irregularParams, new Date(q.buckets.end).toISOString())}::timestamptz`,
        irregularParams,
      );
  const applied = irregular.filter((r) => byEnd.has(r.collected_at));

  const runs = runsOf(intervals, q.rates === true);
  const times = new Set<number>([first]);
  for (const run of runs) times.add(run.from(0)).add(run.to(run.length - 1));
  for (const r of applied) times.add(byEnd.get(r.collected_at)!.from).add(r.collected_at);
  if (times.size > Math.max(8, DIFFERENCING.maxTimesShare * intervals.length)) return undefined;

  const rowParams = [...common];
  const rows =
    read && [...times].every((t) => read.times.has(t))
      ? read.rows.filter((r) => times.has(r.collected_at)) // only the times needed: others could name other entities
      : await db.query<Row>(
          // Each time looked up alone: in a compressed day, an element by its offset rather than the day unnested.
          `SELECT ${select} FROM unnest(${next(
            rowParams,
            [...times].map((t) => new Date(t).toISOString()),
          )}::timestamptz[]) AS t(x)
             CROSS JOIN LATERAL ${samplesSql(q.probe, "t.x", "t.x", [...q.columns, ...filters.map(([c]) => c)])} s
            WHERE connection_id = $1${filterSql} AND collected_at = t.x${excludedRowsSql(q.probe)
              .map((w) => ` AND ${w}`)
              .join("")}`,
          rowParams,
        );

  return sumByGroup(q, { first, byEnd, runs, rows, irregular, applied });
}

/**
 * The arithmetic, pure: per entity, each run of counted intervals split at the entity's exceptions; plain
 * segments differenced, exceptions added as recorded; summed per group and bucket. Undefined where the rows
 * contradict the records (a change without an exception: then the scan answers).
 */
function sumByGroup(
  q: GroupedChangeQuery,
  read: { first: number; byEnd: ReturnType<typeof intervalsByEnd>; runs: Run[]; rows: Row[]; irregular: Row[]; applied: Row[] },
): DifferencedChanges | undefined {
  const { first, byEnd, runs, rows, irregular, applied } = read;
  const keys = q.probe.keys;
  // An entity's key values as one string; a single key (most probes) is its own, as it is read as text.
  const [only] = keys;
  const entityOf = keys.length === 1 ? (r: Row) => String(r[only]) : (r: Row) => JSON.stringify(keys.map((k) => r[k]));
  const valuesAt = new Map<string, Map<number, Row>>(); // entity -> sample time -> row
  const exceptions = new Map<string, Map<number, Row>>(); // entity -> interval end -> irregular row
  const keyRow = new Map<string, Row>(irregular.map((r) => [entityOf(r), r]));
  for (const [target, list] of [
    [valuesAt, rows],
    [exceptions, applied],
  ] as const) {
    for (const r of list) {
      const e = entityOf(r);
      keyRow.set(e, r);
      let m = target.get(e);
      if (!m) target.set(e, (m = new Map()));
      m.set(r.collected_at, r);
    }
  }

  const groupOf = (entity: string) => q.groupBy.map((c) => String(keyRow.get(entity)![c]));
  const members = new Map<string, number>();
  for (const entity of keyRow.keys()) {
    const id = JSON.stringify(groupOf(entity));
    members.set(id, (members.get(id) ?? 0) + 1);
  }
  const groups = new Map<string, GroupState>();
  const slots = q.buckets.n + 1;
  const stateOf = (entity: string): GroupState => {
    const group = groupOf(entity);
    const id = JSON.stringify(group);
    let s = groups.get(id);
    if (!s) {
      const [delta, rateSum, valid, validCount] = [
        q.columns.map(() => new Array<number | undefined>(slots)),
        q.columns.map(() => new Float64Array(slots)),
        q.columns.map(() => new Map<number, Set<number>>()),
        q.columns.map(() => new Int32Array(slots)),
      ];
      groups.set(id, (s = { group, delta, rateSum, valid, single: members.get(id) === 1, validCount }));
    }
    return s;
  };
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

  // Where each applied exception's interval sits: its run and position in it (runs and their intervals are in time order).
  const place = new Map<number, [number, number]>();
  for (const t of new Set(applied.map((r) => r.collected_at))) {
    const r = lastAtMost(runs.length, (j) => runs[j].to(0), t);
    place.set(t, [r, lastAtMost(runs[r].length, runs[r].to, t)]);
  }

  const noCuts: number[] = [];
  for (const entity of keyRow.keys()) {
    const values = valuesAt.get(entity) ?? new Map<number, Row>();
    let own: GroupState | undefined; // made at the entity's first valid change
    /** `run[from..to)`: the intervals the change covers. */
    const add = (c: number, bucket: number, change: number, rate: number, run: Run, from: number, to: number) => {
      const s = (own ??= stateOf(entity));
      s.delta[c][bucket] = (s.delta[c][bucket] ?? 0) + change;
      if (!q.rates) return;
      s.rateSum[c][bucket] += rate;
      if (s.single) {
        s.validCount[c][bucket] += to - from;
        return;
      }
      let set = s.valid[c].get(bucket);
      if (!set) s.valid[c].set(bucket, (set = new Set()));
      for (let i = from; i < to; i++) set.add(run.to(i));
    };
    // The entity's exceptions by run, as positions in the run (most entities have none).
    const cuts = new Map<number, number[]>();
    for (const t of exceptions.get(entity)?.keys() ?? []) {
      const [r, i] = place.get(t)!;
      const list = cuts.get(r);
      if (list) list.push(i);
      else cuts.set(r, [i]);
    }
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r];
      const bucket = run.bucket;
      const ends = cuts.get(r)?.sort((x, y) => x - y) ?? noCuts;
      let from = 0;
      for (let j = 0; j <= ends.length; j++) {
        const cut = j < ends.length ? ends[j] : run.length;
        // Plain growth from run[from] to run[cut - 1]: the difference of the entity's values at the two ends.
        if (cut > from) {
          const first = values.get(run.from(from));
          const last = values.get(run.to(cut - 1));
          if (first && last) {
            const span = (run.to(from) - run.from(from)) / 1000;
            for (let c = 0; c < q.columns.length; c++) {
              const a = num(first[q.columns[c]]);
              const z = num(last[q.columns[c]]);
              if (a === null && z === null) continue;
              if (a === null || z === null || z < a) return undefined; // not plain growth, yet no exception recorded
              add(c, bucket, z - a, (z - a) / span, run, from, cut);
            }
          } else if (first || last) return undefined; // appeared or vanished, yet no exception recorded
        }
        if (cut < run.length) {
          const exception = exceptions.get(entity)!.get(run.to(cut))!;
          for (let c = 0; c < q.columns.length; c++) {
            const change = num(exception[q.columns[c]]);
            if (change !== null) add(c, bucket, change, change / ((run.to(cut) - run.from(cut)) / 1000), run, cut, cut + 1);
          }
        }
        from = cut + 1;
      }
    }
  }

  const allGroups = new Map([...keyRow.values()].map((r) => q.groupBy.map((c) => String(r[c]))).map((g) => [JSON.stringify(g), g]));
  const found = [...groups.values()].map((s) => {
    const delta = q.columns.map(() => new Map<number, number | null>());
    const rate = q.columns.map(() => new Map<number, number | null>());
    for (let c = 0; c < q.columns.length; c++) {
      for (let k = 0; k < slots; k++) {
        const d = s.delta[c][k];
        if (d === undefined) continue;
        delta[c].set(k, d);
        const n = !q.rates ? 0 : s.single ? s.validCount[c][k] : (s.valid[c].get(k)?.size ?? 0);
        rate[c].set(k, n > 0 ? s.rateSum[c][k] / n : null);
      }
    }
    return { group: s.group, delta, rate };
  });
  // An entity that appeared or vanished has an exception with no valid change; so may a reset, told apart by the
  // entity's rows at both ends of the interval (read for every counted one).
  const atBothEnds = (r: Row) => {
    const iv = byEnd.get(r.collected_at);
    return iv !== undefined && valuesAt.get(entityOf(r))?.has(iv.from) === true && valuesAt.get(entityOf(r))?.has(iv.to) === true;
  };
  const unsteady = new Set(irregular.filter((r) => q.columns.every((c) => r[c] === null) && !atBothEnds(r)).map((r) => JSON.stringify(groupOf(entityOf(r)))));
  for (const entity of keyRow.keys()) if (!valuesAt.get(entity)?.has(first)) unsteady.add(JSON.stringify(groupOf(entity)));
  const steadyGroups = [...allGroups].filter(([id]) => !unsteady.has(id)).map(([, group]) => group);
  return { groups: found, allGroups: [...allGroups.values()], runs, steadyGroups };
}
