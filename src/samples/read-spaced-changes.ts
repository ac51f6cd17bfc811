/**
 * Reading by difference (differenced-changes.ts) in one statement where a connection's changes are one collection
 * interval apart but for a few (changes-repository.ts): the facts that show it (spacedFrom judges them), and where
 * they do, the entities' irregular intervals and the rows at every sample time the arithmetic may read: the last
 * sample before each edge given (each bucket's first instant and the window's end; counted on from the facts), the
 * first change's two samples and the last change's, both ends of each change of another length and of each
 * irregular interval. Runs end at bucket edges, where the interval length changes (gaps are such changes) and at
 * irregular intervals; the caller checks that every time it needs was read.
 */
import type { Queryable } from "../../drivers/types.ts";
import { irregularTableName, probeTable, quoteIdent } from "../probes/ddl.ts";
import type { ProbeDefinition } from "../probes/types.ts";
import { type EvenChanges, type SpacedFacts, type SpacedSequence, epochMsSql, spacedChangesSql, spacedFrom, spacedParams } from "./read-changes.ts";
import { excludedRowsSql } from "./read-raw-rows.ts";
import { samplesSql } from "../probes/history-ddl.ts";

/** A row read, its sample time as epoch milliseconds. */
type Row = Record<string, unknown> & { collected_at: number };

export interface SpacedRead {
  /** The changes the facts show; undefined where they do not (then nothing else was read). */
  changes: EvenChanges | SpacedSequence | undefined;
  /** The irregular entity intervals ending in (range.from, range.to]. */
  irregular: Row[];
  /** The rows at `times`. */
  rows: Row[];
  /** The sample times read (epoch ms). */
  times: Set<number>;
}

export async function readSpaced(
  db: Queryable,
  q: { probe: ProbeDefinition; connectionId: number; columns: readonly string[]; filters: ReadonlyArray<[string, string]> },
  range: { from: number; to: number; cellsFrom: number },
  intervalMs: number,
  edges: readonly number[],
): Promise<SpacedRead> {
  const { probe } = q;
  const params = [...spacedParams(q.connectionId, range, intervalMs), q.connectionId, edges.map((t) => new Date(t).toISOString())];
  const [id, at] = [`$${params.length - 1}`, `$${params.length}`];
  const filterSql = q.filters.map(([column, value]) => ` AND ${quoteIdent(column)} = $${params.push(value)}`).join("");
  const keys = probe.keys.map((k) => `${quoteIdent(k)}::text AS ${quoteIdent(k)}`);
  const values = q.columns.map((c) => `${quoteIdent(c)}::text AS ${quoteIdent(c)}`);
  const nothing = [...probe.keys, ...q.columns].map((c) => `NULL::text AS ${quoteIdent(c)}`);
  const spaced = "(SELECT spaced FROM d) IS TRUE";
  const rows = await db.query<Row & { kind: number; facts: SpacedFacts | null }>(
    `WITH d AS MATERIALIZED (${spacedChangesSql(probe)}),
     i AS MATERIALIZED (SELECT collected_at, ${[...keys, ...values].join(", ")} FROM ${probeTable(irregularTableName(probe.name))}
                         WHERE ${spaced} AND connection_id = ${id} AND collected_at > $2::timestamptz AND collected_at <= $3::timestamptz${filterSql}),
     -- The changes of another length as rows, each edge's neighbours looked up among them (OFFSET 0: each once;
     -- subscripting the array per edge and element took 2 ms of a month's 150 edges in the lab).
     g AS MATERIALIZED (SELECT d.irregular[k][1] AS to_ms, d.irregular[k][2] AS from_ms FROM d CROSS JOIN LATERAL generate_subscripts(coalesce(d.irregular, '{}'), 1) AS k),
     t AS MATERIALIZED (SELECT DISTINCT x FROM (
         -- The last sample before each edge, counted on in steps of the spacing from the latest end of a change of
         -- another length before it (or from the first change's previous sample), up to the next such change.
         SELECT to_timestamp(least(a.anchor + floor((e.ms - 1 - a.anchor) / s.ms) * s.ms, n.next_from) / 1000) AS x
           FROM d CROSS JOIN LATERAL (SELECT CASE WHEN d.even THEN d.first - d.previous ELSE $6::float8 END AS ms) s
           CROSS JOIN LATERAL (SELECT round(date_part('epoch', at) * 1000) AS ms FROM unnest(${at}::timestamptz[]) AS at) e
           CROSS JOIN LATERAL (SELECT greatest(d.previous, (SELECT max(g.to_ms) FROM g WHERE g.to_ms < e.ms)) AS anchor OFFSET 0) a
           CROSS JOIN LATERAL (SELECT (SELECT min(g.from_ms) FROM g WHERE g.from_ms >= a.anchor) AS next_from OFFSET 0) n
          WHERE e.ms > d.previous
         UNION ALL
         SELECT to_timestamp(u.ms / 1000) FROM d CROSS JOIN LATERAL unnest(ARRAY[d.first, d.previous, d.last]) AS u(ms)
         UNION ALL
         SELECT to_timestamp(u.ms / 1000) FROM d CROSS JOIN LATERAL unnest(d.irregular) AS u(ms)
         UNION ALL
         -- An irregular interval's previous sample: one interval before it, unless it ends a change of another length (listed).
         SELECT v.x FROM i CROSS JOIN d
           CROSS JOIN LATERAL (VALUES (i.collected_at), (i.collected_at - make_interval(secs => CASE WHEN d.even THEN d.first - d.previous ELSE $6::float8 END / 1000))) AS v(x)) y
       WHERE ${spaced} AND x IS NOT NULL)
     -- Sample times go out as epoch milliseconds: numbers decode far faster than timestamps (epochMsSql).
     SELECT 0 AS kind, NULL::float8 AS collected_at, ${nothing.join(", ")}, row_to_json(d) AS facts FROM d
     UNION ALL SELECT 1, ${epochMsSql("collected_at")}, ${[...probe.keys, ...q.columns].map(quoteIdent).join(", ")}, NULL FROM i
     -- The rows at each time looked up by index, whatever the datastore estimates: a kept, generic plan had read
     -- every row of a week's partition and compared it with each time (lab: a week of one database 9 ms, against 4).
     UNION ALL SELECT 2, ${epochMsSql("collected_at")}, ${[...keys, ...values].join(", ")}, NULL FROM t
                CROSS JOIN LATERAL (SELECT * FROM ${samplesSql(probe, "t.x", "t.x", [...q.columns, ...q.filters.map(([c]) => c)])} r
                                     WHERE r.connection_id = ${id} AND r.collected_at = t.x AND r.collected_at >= $2::timestamptz AND r.collected_at <= $3::timestamptz${filterSql}${excludedRowsSql(
                                       probe,
                                     )
                                       .map((w) => ` AND ${w}`)
                                       .join("")}
                                    OFFSET 0) r
     UNION ALL SELECT 3, ${epochMsSql("x")}, ${nothing.join(", ")}, NULL FROM t`,
    params,
    // Planned once per connection: planning was most of this statement (lab: a day of one database 9 -> 5 ms).
    { reusePlan: true },
  );
  const facts = rows.find((r) => r.kind === 0)?.facts;
  const of = (kind: number) => rows.filter((r) => r.kind === kind);
  return {
    changes: facts ? spacedFrom(facts, intervalMs) : undefined,
    irregular: of(1),
    rows: of(2),
    times: new Set(of(3).map((r) => r.collected_at)),
  };
}
