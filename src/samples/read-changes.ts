/** Reads the per-sample changes recorded by the sample writer (see samples/record-changes.ts). */
import type { Queryable } from "../../drivers/types.ts";
import { HOUR_MS as HOUR, changeCellsTableName, changesTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";

/** A timestamp as epoch milliseconds (see epochMsSql). */
export const msSql = (timestamp: string) => `round(date_part('epoch', ${timestamp}) * 1000)`;

/**
 * A timestamp column as epoch milliseconds (as a Date holds them): numbers decode far faster than timestamps.
 * date_part is double precision arithmetic (extract's numeric took most of a long read's time); rounding makes
 * it exact for the whole milliseconds the sample writer stores, and one instant always maps to one number.
 */
export const epochMsSql = (column: string) => `${msSql(column)} AS ${column}`;

/** Milliseconds from one timestamp to another, in double precision as epochMsSql (exact for whole milliseconds). */
export const spanMsSql = (later: string, earlier: string) => `round(date_part('epoch', ${later} - ${earlier}) * 1000)`;

export interface StoredChange {
  connection_id: number;
  /** Epoch ms. */
  collected_at: number;
  prev_collected_at: number;
  [column: string]: number | null;
}

/** Changes of samples in [from, to] whose previous sample is not older than `earliestPrevious`. */
export async function fetchStoredChanges(
  db: Queryable,
  q: { probe: ProbeDefinition; connectionIds: readonly number[]; columns: readonly string[]; from: number; to: number; earliestPrevious: number },
): Promise<StoredChange[]> {
  const columns = [...new Set(q.columns)].map(quoteIdent).join(", ");
  return db.query<StoredChange>(
    `SELECT connection_id, ${epochMsSql("collected_at")}, ${epochMsSql("prev_collected_at")}, ${columns} FROM ${probeTable(changesTableName(q.probe.name))}
      WHERE connection_id = ANY($1::int[]) AND collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz
        AND prev_collected_at >= $4::timestamptz
      ORDER BY connection_id, collected_at`,
    [q.connectionIds, new Date(q.from).toISOString(), new Date(q.to).toISOString(), new Date(q.earliestPrevious).toISOString()],
    { reusePlan: true },
  );
}

/**
 * Per connection with samples in [from, to], from the recorded changes in one scan: how many samples it has there
 * (one change a sample but the connection's first, which is counted when it lies in range: it is then the
 * previous sample of the earliest change and has no change of its own), and the median spacing (ms) of its
 * consecutive samples there (the gap rule's judge; null with fewer than two).
 */
export async function sampleSpacings(
  db: Queryable,
  probe: ProbeDefinition,
  connectionIds: readonly number[],
  from: number,
  to: number,
): Promise<Map<number, { samples: number; median: number | null }>> {
  const table = probeTable(changesTableName(probe.name));
  const rows = await db.query<{ connection_id: number; samples: number; median: number | null }>(
    `SELECT w.connection_id, w.median, w.changes + (w.first_previous >= $2::timestamptz AND NOT EXISTS (
              SELECT 1 FROM ${table} c0 WHERE c0.connection_id = w.connection_id AND c0.collected_at = w.first_previous))::int AS samples
       FROM (SELECT connection_id, count(*)::int AS changes, min(prev_collected_at) AS first_previous,
                    percentile_cont(0.5) WITHIN GROUP (ORDER BY ${spanMsSql("collected_at", "prev_collected_at")}) FILTER (WHERE prev_collected_at >= $2::timestamptz) AS median
               FROM ${table}
              WHERE connection_id = ANY($1::int[]) AND collected_at >= $2::timestamptz AND collected_at <= $3::timestamptz
              GROUP BY connection_id) w`,
    [connectionIds, new Date(from).toISOString(), new Date(to).toISOString()],
  );
  return new Map(rows.map((r) => [r.connection_id, { samples: r.samples, median: r.median === null ? null : Number(r.median) }]));
}

/**
 * The connection's changes ending in [$2, $3] counted, and their longest interval, without reading each one: whole
 * hours [$4, $5) from the hourly change cells, the changes of the rest (`id`: the connection; $4 = $5 when no
 * whole hour is read). Two lateral joins, `w` (cells) and `r` (rows), each giving `changes` and `longest`; with
 * `longerThan` (an SQL expression, ms), `r` also gives `longer`, the changes longer than it, and so does a third,
 * `y`, for the whole hours: from the few whose cells hold one (found by index, migration 30).
 */
function countedChangesSql(probe: ProbeDefinition, longerThan?: string): string {
  const changes = probeTable(changesTableName(probe.name));
  const cells = probeTable(changeCellsTableName(probe.name));
  const span = spanMsSql("c.collected_at", "c.prev_collected_at");
  const longer = longerThan
    ? `
       CROSS JOIN LATERAL (SELECT count(*)::int AS longer FROM ${cells} l JOIN ${changes} c
                             ON c.connection_id = id AND c.collected_at >= l.cell_start AND c.collected_at < l.cell_start + interval '1 hour'
                            WHERE l.connection_id = id AND l.level_seconds = 3600 AND l.cell_start >= $4::timestamptz AND l.cell_start < $5::timestamptz
                              AND l.max_span_ms > ${longerThan} AND ${span} > ${longerThan}) y`
    : "";
  return `CROSS JOIN LATERAL (SELECT sum(intervals)::int AS changes, max(max_span_ms) AS longest FROM ${cells}
                            WHERE connection_id = id AND level_seconds = 3600 AND cell_start >= $4::timestamptz AND cell_start < $5::timestamptz) w
       CROSS JOIN LATERAL (SELECT count(*)::int AS changes, max(span) AS longest${longerThan ? `, count(*) FILTER (WHERE span > ${longerThan})::int AS longer` : ""} FROM (
                             SELECT ${span} AS span FROM ${changes} c WHERE c.connection_id = id AND c.collected_at >= $2::timestamptz AND c.collected_at < $4::timestamptz
                             UNION ALL
                             SELECT ${span} FROM ${changes} c WHERE c.connection_id = id AND c.collected_at >= $5::timestamptz AND c.collected_at <= $3::timestamptz) x) r${longer}`;
}

/** countedChangesSql's parameters $2..$5 for [from, to] with cells complete from `cellsFrom`. */
function countedChangesParams(from: number, to: number, cellsFrom: number): string[] {
  const lo = Math.ceil(Math.max(from, cellsFrom) / HOUR) * HOUR;
  const hi = Math.floor(to / HOUR) * HOUR;
  const [cellsLo, cellsHi] = lo < hi ? [lo, hi] : [from, from];
  return [from, to, cellsLo, cellsHi].map((t) => new Date(t).toISOString());
}

/**
 * What sampleBounds tells of a connection's samples in a window: how many (as sampleSpacings counts them), how many
 * intervals end there, the longest of those (null without one) and how many are longer than the collection interval.
 */
export interface SpacingBounds {
  samples: number;
  intervals: number;
  longest: number | null;
  longer: number;
}

/**
 * Per connection with samples in [from, to], its SpacingBounds, without reading every recorded change: whole hours
 * from the hourly change cells (complete from `cellsFrom`), the changes of the rest, and the earliest change in
 * range for the connection's first sample. One statement, a few hundred rows over a month.
 */
export async function sampleBounds(
  db: Queryable,
  probe: ProbeDefinition,
  connectionIds: readonly number[],
  window: { from: number; to: number; cellsFrom: number; intervalMs: number },
): Promise<Map<number, SpacingBounds>> {
  const changes = probeTable(changesTableName(probe.name));
  const rows = await db.query<SpacingBounds & { connection_id: number }>(
    `SELECT id AS connection_id, (r.changes + coalesce(w.changes, 0) + (f.first_previous >= $2::timestamptz AND NOT EXISTS (
              SELECT 1 FROM ${changes} c0 WHERE c0.connection_id = id AND c0.collected_at = f.first_previous))::int)::int AS samples,
            (r.changes + coalesce(w.changes, 0))::int AS intervals, greatest(r.longest, w.longest) AS longest, (r.longer + y.longer)::int AS longer
       FROM unnest($1::int[]) AS id
       ${countedChangesSql(probe, "$6::float8")}
       CROSS JOIN LATERAL (SELECT c.prev_collected_at AS first_previous FROM ${changes} c
                            WHERE c.connection_id = id AND c.collected_at >= $2::timestamptz AND c.collected_at <= $3::timestamptz ORDER BY c.collected_at LIMIT 1) f`,
    [connectionIds, ...countedChangesParams(window.from, window.to, window.cellsFrom), window.intervalMs],
  );
  return new Map(rows.map(({ connection_id, ...bounds }) => [connection_id, bounds]));
}

/**
 * The judged interval where the bounds tell it: the collection interval, where more than
 * half of the intervals starting in the window are no longer (so is the median); undefined otherwise.
 */
export function judgedFromBounds(bounds: SpacingBounds, intervalMs: number): number | undefined {
  // Of the intervals ending in the window, all but perhaps the first start in it.
  return bounds.intervals > 2 * bounds.longer + 2 ? intervalMs : undefined;
}

/** Changes that are every one `spacing` ms long: the i-th (from 0) ends at `first + i * spacing`. */
export interface EvenChanges {
  first: number;
  spacing: number;
  count: number;
}

/** Changes listed by their times (`to`) and their previous samples' (`from`), in time order. */
export interface ChangeSequence {
  to: number[];
  from: number[];
}

/** `count` changes each `spacing` long, the first from `from`, each beginning where the one before it ended. */
export interface Segment {
  from: number;
  count: number;
  spacing: number;
}

/** Changes as consecutive segments, in time order. */
export interface SpacedSequence {
  segments: Segment[];
}

/** The most changes of another length than the collection interval for which the rest are not read (spacedFrom). */
export const MAX_IRREGULAR_CHANGES = 128;

/** What spacedChangesSql reads of a connection's changes in range (times as epoch ms). */
export interface SpacedFacts {
  changes: number;
  longest: number | null;
  first: number | null;
  previous: number | null;
  last: number | null;
  unchecked: boolean;
  /** [to, from] of up to MAX_IRREGULAR_CHANGES + 1 changes not one interval long, where the rest do not show them evenly spaced. */
  irregular: number[][] | null;
  /** Whether the facts may show the sequence (as spacedFrom judges them; it decides). */
  spaced: boolean;
}

/**
 * A SELECT of one row of SpacedFacts for connection $1 (int[] of one) and changes ending in [$2, $3] (whole hours
 * [$4, $5) from the change cells: countedChangesSql), $6 the collection interval (ms); spacedParams gives them.
 * The facts of a keyed probe's changes without reading each one: their count and longest interval, the first's two
 * times, the last's time, whether each says its irregular entity intervals were recorded (entities_checked); and,
 * where those do not show them evenly spaced, the few whose interval is not $6 long (a missed round, a late one).
 */
export function spacedChangesSql(probe: ProbeDefinition): string {
  const changes = probeTable(changesTableName(probe.name));
  const cells = probeTable(changeCellsTableName(probe.name));
  const inRange = (id: string) => `c.connection_id = ${id} AND c.collected_at >= $2::timestamptz AND c.collected_at <= $3::timestamptz`;
  // Exact: the sample writer stores times to the millisecond, so spans are whole milliseconds.
  const other = `${spanMsSql("c.collected_at", "c.prev_collected_at")} <> $6::float8`;
  const times = `${msSql("c.collected_at")} AS collected_at, ${msSql("c.prev_collected_at")} AS prev_collected_at`;
  const even = "(e.longest <= e.first - e.previous AND e.last - e.first = (e.changes - 1) * (e.first - e.previous))";
  // The changes of another length, looked for in whole hours [$4, $5) only where the hour's cell shows one (its
  // shortest or longest interval is another; a cell written before migration 32 has no shortest), and in the rest
  // of the range; one join of ranges, each [lo, hi) (times are whole milliseconds: `<= $3` is `< $3 + 1 ms`).
  return `SELECT x.*, NOT x.unchecked AND (x.even OR cardinality(x.irregular) <= ${MAX_IRREGULAR_CHANGES}) AS spaced FROM (
            SELECT e.*, coalesce(${even}, false) AS even, CASE WHEN NOT ${even} THEN
                     (SELECT array_agg(ARRAY[i.collected_at, i.prev_collected_at] ORDER BY i.collected_at) FROM (
                        SELECT ${times}
                          FROM (SELECT $2::timestamptz AS lo, $4::timestamptz AS hi UNION ALL SELECT $5::timestamptz, $3::timestamptz + interval '1 millisecond'
                                UNION ALL
                                SELECT l.cell_start, l.cell_start + interval '1 hour' FROM ${cells} l
                                 WHERE l.connection_id = e.id AND l.level_seconds = 3600 AND l.cell_start >= $4::timestamptz AND l.cell_start < $5::timestamptz
                                   AND (l.min_span_ms IS DISTINCT FROM $6::float8 OR l.max_span_ms <> $6::float8)) r
                          JOIN ${changes} c ON c.connection_id = e.id AND c.collected_at >= r.lo AND c.collected_at < r.hi
                         WHERE ${other}
                         LIMIT ${MAX_IRREGULAR_CHANGES + 1}) i) END AS irregular
              FROM (SELECT id, r.changes + coalesce(w.changes, 0) AS changes, greatest(r.longest, w.longest) AS longest, f.collected_at AS first, f.prev_collected_at AS previous,
                           (SELECT ${msSql("c.collected_at")} FROM ${changes} c WHERE ${inRange("id")} ORDER BY c.collected_at DESC LIMIT 1) AS last,
                           EXISTS (SELECT 1 FROM ${changes} c WHERE ${inRange("id")} AND c.entities_checked IS NOT TRUE) AS unchecked
                      FROM unnest($1::int[]) AS id
                      ${countedChangesSql(probe)}
                      LEFT JOIN LATERAL (SELECT ${msSql("c.collected_at")} AS collected_at, ${msSql("c.prev_collected_at")} AS prev_collected_at FROM ${changes} c
                                          WHERE ${inRange("id")} ORDER BY c.collected_at LIMIT 1) f ON true) e
            OFFSET 0) x`; // not pulled up: the list would be read once for each use of it
}

/** spacedChangesSql's parameters $1..$6. */
export const spacedParams = (connectionId: number, range: { from: number; to: number; cellsFrom: number }, intervalMs: number): unknown[] => [
  [connectionId],
  ...countedChangesParams(range.from, range.to, range.cellsFrom),
  intervalMs,
];

/**
 * The changes the facts show, without a list of them:
 * - evenly spaced: with n changes whose intervals are at most s long, where the first is s long and the last ends
 *   (n - 1) s after the first, every interval is s long (EvenChanges);
 * - else, with at most MAX_IRREGULAR_CHANGES of them not `intervalMs` long: every other change is, and each
 *   begins where the one before it ended (the previous sample), so the sequence follows from the first change and
 *   those few, which must lead to the last change in as many changes as were counted (SpacedSequence).
 * Undefined otherwise (or with no change, or one written before irregular intervals were recorded).
 */
export function spacedFrom(facts: SpacedFacts, intervalMs: number): EvenChanges | SpacedSequence | undefined {
  const { changes, longest, first, previous, last, irregular } = facts;
  if (facts.unchecked || first === null || previous === null || last === null || longest === null) return undefined;
  const spacing = first - previous;
  if (spacing > 0 && longest <= spacing && last - first === (changes - 1) * spacing) return { first, spacing, count: changes };
  if (irregular === null || irregular.length > MAX_IRREGULAR_CHANGES) return undefined;
  return sequenceBetween(
    { to: first, from: previous },
    last,
    changes,
    intervalMs,
    irregular.map(([to, from]) => ({ to: Number(to), from: Number(from) })),
  );
}

/**
 * The chain of changes from `first` to the one ending at `last`, each `spacing` long but the `irregular` ones (in
 * time order), as runs of one length; undefined where they do not chain up into `count` changes.
 */
export function sequenceBetween(
  first: { to: number; from: number },
  last: number,
  count: number,
  spacing: number,
  irregular: ReadonlyArray<{ to: number; from: number }>,
): SpacedSequence | undefined {
  const segments: Segment[] = [];
  let [at, total] = [first.from, 0];
  const add = (from: number, n: number, length: number) => {
    if (n > 0) segments.push({ from, count: n, spacing: length });
    total += n;
  };
  const evenTo = (end: number) => {
    if (end < at || (end - at) % spacing !== 0) return false;
    add(at, (end - at) / spacing, spacing);
    at = end;
    return true;
  };
  for (const change of irregular) {
    if (!evenTo(change.from)) return undefined;
    add(change.from, 1, change.to - change.from);
    at = change.to;
  }
  if (!evenTo(last)) return undefined;
  const firstTo = segments.length > 0 ? segments[0].from + segments[0].spacing : undefined;
  return total === count && firstTo === first.to ? { segments } : undefined;
}
