/** The one statement that reads a query's buckets from time rollups: its whole cells, and the rest raw. */
import type { Queryable } from "../../drivers/types.ts";
import type { RollupPlan } from "../metrics/rollup-plan.ts";
import { type ChangeFact, HOUR_PARTS, type LevelFact, factColumn } from "../probes/ddl.ts";
import { arrayLiteral, timeOfMs, timesLiteral } from "../datastore/array-literal.ts";

export interface RollupRead {
  /** The cells table (schema-qualified, quoted). */
  cellsTable: string;
  /** The fact columns, as the cells table names them and the raw part selects them. */
  facts: readonly string[];
  /** Aggregate expressions that merge fact rows into one (per connection and bucket). */
  merged: readonly string[];
  /** A SELECT of connection_id, collected_at and the facts for the raw rows with `p.lo <= collected_at < p.hi`. */
  rawFacts: string;
  connectionIds: readonly number[];
  plan: RollupPlan;
  /**
   * A further column that splits a connection's facts (the entity, text[]), selected by both parts; it comes back
   * as JSON text (entity-cells.ts parses each distinct one once).
   */
  key?: string;
  /**
   * The facts of a cell as read, over `l` (default: `l.<fact>`); for cells read for some of their parts (RollupPlan's
   * `parts`: l.part_from..l.part_to - 1; 0 and 12 when whole).
   */
  cellFacts?: readonly string[];
  /** Facts that are times, returned as epoch milliseconds (returnedFacts). */
  times?: readonly string[];
  /** Further conditions on the cells (`l`), with their values as `params` ($17 onwards: FIRST_EXTRA_PARAM). */
  cellsWhere?: readonly string[];
  params?: readonly unknown[];
  /**
   * Merge each range's raw facts in its own scan (a small hash per range), so the final merge groups a few rows
   * per bucket rather than every raw row: worth it where raw rows are many and cheap to merge (the per-sample
   * changes; every entity's rows), where the final sort of every row had spilled to disk.
   */
  mergePerRange?: boolean;
  /** The datastore may plan the statement once per connection (a driver's `reusePlan`): where measured faster. */
  reusePlan?: boolean;
  /**
   * Each fact as a raw range counts when subtracted from the cell around it (a plan's `minus`), over the alias
   * `r`: counts and sums negated, what cannot be subtracted NULL or kept (a longest interval stays an upper bound).
   * Required when the plan has such ranges.
   */
  subtracted?: readonly string[];
  /**
   * A condition on a cell (`l`) under which it is read from raw rows instead: its range, as the plan reads it, in
   * its bucket (a cell holding a gap, whose facts cannot leave it out). Not with a key.
   */
  readRawIf?: string;
}

/**
 * Facts of columns over the alias `r` as a raw range counts when subtracted from the cell around it (RollupRead's
 * `subtracted`): the facts in `sums` negated, the others unknown (NULL; `times` are timestamps).
 */
export function subtractedFacts<F extends LevelFact | ChangeFact>(
  columns: readonly string[],
  facts: readonly F[],
  sums: readonly F[],
  times: readonly F[] = [],
): string[] {
  return columns.flatMap((name) =>
    facts.map((f) => (sums.includes(f) ? `-r.${factColumn(name, f)}` : times.includes(f) ? "NULL::timestamptz" : "NULL::float8")),
  );
}

/** Facts of the alias as a statement returns them: those that are times as epoch milliseconds (a double decodes far faster than a Date). */
export const returnedFacts = (facts: readonly string[], times: readonly string[], alias: string) =>
  facts.map((f) => (times.includes(f) ? `round(date_part('epoch', ${alias}.${f}) * 1000) AS ${f}` : `${alias}.${f}`));

/** The number of the first parameter in `params`. */
export const FIRST_EXTRA_PARAM = 17;

export type BucketRow = Record<string, number | null> & { connection_id: number; k: number };

/**
 * The plan's raw ranges with each one that ends where the next begins (either side of a bucket edge) read
 * together, as [lo, hi) split at `split` (rows before it in bucket k, the rest in kAfter): one index range
 * scan per pair, where each scan has a fixed cost (for entity cells, the sample before the range).
 */
export function pairedRanges(raw: RollupPlan["raw"]): PairedRange[] {
  const paired: PairedRange[] = [];
  for (let i = 0; i < raw.length; i++) {
    const [a, b] = [raw[i], raw[i + 1]];
    if (b && a.to === b.from) {
      paired.push({ lo: a.from, split: a.to, hi: b.to, k: a.k, kAfter: b.k, minus: a.minus, minusAfter: b.minus });
      i++;
    } else paired.push({ lo: a.from, split: a.to, hi: a.to, k: a.k, kAfter: a.k, minus: a.minus, minusAfter: a.minus });
  }
  return paired;
}

/** Two raw ranges read as one, with the bucket each side falls in and the bucket each side is subtracted from. */
export interface PairedRange {
  lo: number;
  split: number;
  hi: number;
  k: number;
  kAfter: number;
  minus?: number;
  minusAfter?: number;
}

/**
 * Consecutive planned cells of one level for one bucket, from `start` to `end`: the first read from its part
 * `partFrom` on, the last up to its part `partTo` (exclusive), the others whole (0 and HOUR_PARTS: whole).
 */
export interface CellRun {
  levelSeconds: number;
  start: number;
  end: number;
  k: number;
  partFrom: number;
  partTo: number;
}

/**
 * The plan's cells as runs: each cell that follows the last at the same level in the same bucket joins its run,
 * unless the run's last cell or this one is cut where they meet (a bucket's cells are then one run: the hour its
 * start cuts, read from a part on, the whole hours, and the hour its end cuts, read up to a part).
 */
export function cellRuns(cells: RollupPlan["cells"]): CellRun[] {
  const runs: CellRun[] = [];
  for (const cell of cells) {
    const [partFrom, partTo] = cell.parts ?? [0, HOUR_PARTS];
    const last = runs.at(-1);
    const end = cell.start + cell.levelSeconds * 1000;
    if (last && last.levelSeconds === cell.levelSeconds && last.k === cell.k && last.end === cell.start && last.partTo === HOUR_PARTS && partFrom === 0) {
      last.end = end;
      last.partTo = partTo;
    } else runs.push({ levelSeconds: cell.levelSeconds, start: cell.start, end, k: cell.k, partFrom, partTo });
  }
  return runs;
}

/** The parts of the cell `l` that its run `p` reads, as `part_from` and `part_to` (cut only at the run's ends). */
const cellPartsSql = `CASE WHEN l.cell_start = p.cell_start THEN p.part_from ELSE 0 END AS part_from,
                      CASE WHEN l.cell_start = p.last_start THEN p.part_to ELSE ${HOUR_PARTS} END AS part_to`;

/**
 * Per connection (and key) and bucket (k), the merged facts; `$1` is the connection ids in `rawFacts`. In that
 * order, except with a key: sorting thousands of rows by an array of text took a tenth of a week's read.
 */
export async function readRollupBuckets(db: Queryable, q: RollupRead): Promise<BucketRow[]> {
  const iso = (t: number) => new Date(t).toISOString();
  const cells = cellRuns(q.plan.cells);
  const raw = pairedRanges(q.plan.raw);
  const by = ["connection_id", ...(q.key ? [q.key] : []), "k"].join(", ");
  const key = (alias: string) => (q.key ? ` ${alias}.${q.key},` : "");
  // A raw row falls in bucket k before the range's split, else in k_after.
  const [rawPart, early] = q.mergePerRange
    ? [
        `SELECT x.connection_id,${key("x")} x.collected_at < p.split AS early, ${q.merged.join(", ")} FROM (${q.rawFacts}) x GROUP BY ${q.key ? "1, 2, 3" : "1, 2"}`,
        "r.early",
      ]
    : [q.rawFacts, "r.collected_at < p.split"];
  const subtracting = raw.some((r) => r.minus !== undefined || r.minusAfter !== undefined);
  if (subtracting && q.subtracted?.length !== q.facts.length) throw new Error("a plan that subtracts raw ranges from cells needs each fact's subtracted form");
  if (q.readRawIf && q.key) throw new Error("cells read raw would read every entity's rows of their range");
  const facts = q.facts.map((f, i) => (subtracting ? `CASE WHEN s.plus THEN r.${f} ELSE ${q.subtracted![i]} END` : `r.${f}`));
  const cellsWhere = ["l.connection_id = ANY($1::int[]) AND l.cell_start >= $8::timestamptz AND l.cell_start < $9::timestamptz", ...(q.cellsWhere ?? [])];
  // Each run's last cell start worked out once per run, not per cell read (cellPartsSql).
  const plannedCells = `(SELECT u.level_seconds, ${timeOfMs("u.cell_start")} AS cell_start, ${timeOfMs("u.cell_end")} AS cell_end,
                                ${timeOfMs("(u.cell_end - 1000 * u.level_seconds)")} AS last_start, u.k, u.part_from, u.part_to
                           FROM unnest($2::int[], $3::int8[], $4::int[], $14::int[], $15::int[], $16::int8[]) AS u(level_seconds, cell_start, k, part_from, part_to, cell_end)) AS p`;
  const plannedRanges = `(SELECT ${timeOfMs("u.lo")} AS lo, ${timeOfMs("u.hi")} AS hi, u.k, ${timeOfMs("u.split")} AS split, u.k_after, u.minus, u.minus_after
                            FROM unnest($5::int8[], $6::int8[], $7::int[], $10::int8[], $11::int[], $12::int[], $13::int[]) AS u(lo, hi, k, split, k_after, minus, minus_after)) AS p`;
  // Ranges of the plan (every connection's rows) and, read raw, of the cells that satisfy readRawIf (their connection's):
  // those found first, each then looked up in the plan (the plan's cells unnested for the few, not joined with all).
  const bound = (part: string) => `l.cell_start + make_interval(secs => ${part} * l.level_seconds / ${HOUR_PARTS}.0)`;
  const ranges = q.readRawIf
    ? `(SELECT NULL::int AS id, * FROM ${plannedRanges}
         UNION ALL
         SELECT l.connection_id, ${bound("c.part_from")}, ${bound("c.part_to")}, p.k, ${bound("c.part_to")}, p.k, NULL, NULL
           FROM ${q.cellsTable} l
           CROSS JOIN LATERAL (SELECT * FROM ${plannedCells} WHERE p.level_seconds = l.level_seconds AND l.cell_start >= p.cell_start AND l.cell_start < p.cell_end OFFSET 0) p
           CROSS JOIN LATERAL (SELECT ${cellPartsSql}) c
          WHERE ${[...cellsWhere, `(${q.readRawIf})`].join(" AND ")}) AS p`
    : plannedRanges;
  const rawWhere = [...(subtracting ? ["s.k IS NOT NULL"] : []), ...(q.readRawIf ? ["(p.id IS NULL OR r.connection_id = p.id)"] : [])];
  return db.query<BucketRow>(
    `SELECT ${q.key ? `m.connection_id, array_to_json(m.${q.key})::text AS ${q.key}, m.k` : by}, ${returnedFacts(q.facts, q.times ?? [], "m").join(", ")} FROM (
     SELECT ${by}, ${q.merged.join(", ")}
       FROM (
         SELECT l.connection_id,${key("l")} p.k, ${q.facts.map((f, i) => (q.cellFacts ? `${q.cellFacts[i]} AS ${f}` : `l.${f}`)).join(", ")}
           FROM ${plannedCells}
           -- One index range scan per run of cells, whatever the datastore estimates (a kept, generic plan had
           -- joined every cell with every planned one: lab, a month's summed rate 17 ms -> 1.6 s).
           CROSS JOIN LATERAL (SELECT l.*, ${cellPartsSql} FROM ${q.cellsTable} l
                                WHERE l.level_seconds = p.level_seconds AND l.cell_start >= p.cell_start AND l.cell_start < p.cell_end AND ${[...cellsWhere, ...(q.readRawIf ? [`NOT (${q.readRawIf})`] : [])].join(" AND ")}
                               OFFSET 0) l
         UNION ALL
         -- One index range scan per raw range (a join would compare every range with every row).
         SELECT r.connection_id,${key("r")} ${subtracting ? "s.k" : `CASE WHEN ${early} THEN p.k ELSE p.k_after END`}, ${facts.join(", ")}
           FROM ${ranges}
           CROSS JOIN LATERAL (${rawPart}) r${
             subtracting
               ? `
           -- Each row once for its own bucket, and again, subtracted, for the bucket that reads the cell around it.
           CROSS JOIN LATERAL (VALUES (CASE WHEN ${early} THEN p.k ELSE p.k_after END, true), (CASE WHEN ${early} THEN p.minus ELSE p.minus_after END, false)) AS s(k, plus)`
               : ""
           }${
             rawWhere.length
               ? `
          WHERE ${rawWhere.join(" AND ")}`
               : ""
           }
       ) parts
      GROUP BY ${by}) m${q.key ? "" : ` ORDER BY ${by}`}`,
    // The plan's arrays go as array literals, times in epoch milliseconds: a week's plan of 1,800 cells took 2 ms to
    // send and parse as arrays of timestamps (lab), a fifth of its statement.
    [
      q.connectionIds,
      arrayLiteral(cells.map((c) => c.levelSeconds)),
      timesLiteral(cells.map((c) => c.start)),
      arrayLiteral(cells.map((c) => c.k)),
      timesLiteral(raw.map((r) => r.lo)),
      timesLiteral(raw.map((r) => r.hi)),
      arrayLiteral(raw.map((r) => r.k)),
      // The cells' span, so that only the window's cells are looked up (none: an empty span).
      iso(cells.length ? cells.reduce((t, c) => Math.min(t, c.start), Number.MAX_SAFE_INTEGER) : 0),
      iso(cells.reduce((t, c) => Math.max(t, c.end), 0)),
      timesLiteral(raw.map((r) => r.split)),
      arrayLiteral(raw.map((r) => r.kAfter)),
      arrayLiteral(raw.map((r) => r.minus ?? null)),
      arrayLiteral(raw.map((r) => r.minusAfter ?? null)),
      arrayLiteral(cells.map((c) => c.partFrom)),
      arrayLiteral(cells.map((c) => c.partTo)),
      timesLiteral(cells.map((c) => c.end)),
      ...(q.params ?? []),
    ],
    { reusePlan: q.reusePlan },
  );
}
