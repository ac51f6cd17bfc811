/**
 * Property: grouped counter changes read by difference (samples/read-by-difference.ts: cumulative values at run
 * ends plus the irregular entity intervals the writer records) equal the scan of every raw row
 * (scannedGroupChanges, itself held to the pure pipeline by grouped-changes.property.test.ts), for every group,
 * bucket and column, deltas and rates, with and without filters, on random statement histories written in
 * shuffled batches (so the writer revises irregular intervals when a sample lands between two others): entities
 * appearing and vanishing, marked and unmarked resets, nulls, gaps, irregular spacing, several users per statement.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { DIFFERENCING, type DifferencedChanges, differencedChanges, differencedGroupChanges } from "../../src/samples/read-by-difference.ts";
import type { GroupedChangeQuery, GroupedChanges } from "../../src/samples/grouped-change-query.ts";
import { bucketValues, scannedGroupChanges } from "../../src/samples/read-grouped-changes.ts";
import { layoutBuckets } from "../../src/metrics/buckets.ts";
import { NARROW_BUCKETS, wideEnoughToDifference } from "../../src/samples/series-by-difference.ts";
import { runGroupedMetricsQuery } from "../../src/queries/grouped-query.ts";
import type { Row } from "../../src/metrics/samples.ts";
import { findProbe } from "../../src/probes/index.ts";
import { addConnection, DATASTORE_KINDS, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { statementHistory } from "../support/statement-history.ts";

const probe = findProbe("pg_stat_statements")!;
const T0 = Date.parse("2026-05-01T00:00:00Z");
const INTERVAL_S = 300;
const SEEDS = Array.from({ length: 10 }, (_, i) => i + 1);
const COLUMNS = ["calls", "total_exec_time"];
const SEPARATOR = "\u001f";

/** Odd seeds: irregular spacing; even seeds: 5-minute spacing with occasional gaps (so rates can be differenced). */
function history(seed: number) {
  const spacings = seed % 2 ? [300, 300, 300, 150, 450, 600, 1, 3600] : [300, 300, 300, 300, 300, 300, 300, 300, 300, 3600];
  return statementHistory(seed, { start: T0, samples: [30, 80], spacings, churn: seed % 3 === 0 ? 0.12 : 0.02, reset: 0.04, drop: 0.03, missing: 0.03 });
}

/** Writes the history in batches of whole samples, in shuffled order. */
async function writeShuffled(store: TestDatastore, connectionId: number, rows: readonly Row[], rng: () => number) {
  const times = [...new Set(rows.map((r) => r.collected_at as string))];
  const batches: string[][] = [];
  for (let i = 0; i < times.length; ) {
    const size = 1 + Math.floor(rng() * 8);
    batches.push(times.slice(i, i + size));
    i += size;
  }
  batches.sort(() => rng() - 0.5);
  for (const batch of batches) {
    const wanted = new Set(batch);
    await writeSamples(store.db, { connectionId, probe: probe.name, rows: rows.filter((r) => wanted.has(r.collected_at as string)) as never });
  }
}

/** The datastore with every statement sent to it recorded. */
function watching(store: TestDatastore) {
  const statements: string[] = [];
  const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;
  return { statements, watched };
}

function expectSame(actual: GroupedChanges[], expected: GroupedChanges[], q: GroupedChangeQuery, where: string) {
  const byGroup = (list: GroupedChanges[]) => new Map(list.map((g) => [g.group.join(SEPARATOR), g]));
  const got = byGroup(actual);
  const want = byGroup(expected);
  for (const g of new Set([...got.keys(), ...want.keys()])) {
    COLUMNS.forEach((column, c) => {
      for (const [what, pick] of [
        ["delta", (x: GroupedChanges) => x.delta[c]],
        ["rate", (x: GroupedChanges) => x.rate[c]],
      ] as const) {
        const a = got.has(g) ? bucketValues(pick(got.get(g)!), q.buckets) : [];
        const e = want.has(g) ? bucketValues(pick(want.get(g)!), q.buckets) : [];
        for (let k = 0; k <= q.buckets.n; k++) {
          const label = `${where}, group ${g}, ${column} ${what}, bucket ${k}`;
          if ((e[k] ?? null) === null) expect(a[k] ?? null, label).toBeNull();
          else expect(a[k], label).toBeCloseTo(e[k]!, 6);
        }
      }
    });
  }
}

describe.each(DATASTORE_KINDS)("differenced grouped changes on %s", (kind) => {
  let store: TestDatastore;
  const tuned = DIFFERENCING.maxTimesShare;
  beforeAll(async () => {
    store = await migratedDatastore(kind);
    DIFFERENCING.maxTimesShare = Number.POSITIVE_INFINITY; // these histories churn far more than real ones: difference them all the same
  });
  afterAll(async () => {
    DIFFERENCING.maxTimesShare = tuned;
    await store.close();
  });

  /** Seed `seed`'s history written in shuffled batches for a new connection; `rng` goes on to pick the queries. */
  async function writtenHistory(name: string, seed: number, salt: number) {
    const connectionId = await addConnection(store.db, name);
    const rows = history(seed);
    const rng = seededRandom(seed * salt);
    await writeShuffled(store, connectionId, rows, rng);
    return { connectionId, rng, last: Date.parse(rows[rows.length - 1].collected_at as string) };
  }

  it.each(SEEDS)("seed %i: equal to the scan of every row for every group, bucket and column", async (seed) => {
    const { connectionId, rng, last } = await writtenHistory(`seed-${seed}`, seed, 104_729);
    const groupings: Array<readonly string[]> = [[], ["database_name"], ["queryid", "database_name"], probe.keys];
    let differenced = 0;
    for (const groupBy of groupings) {
      for (const rates of [false, true]) {
        const start = T0 + Math.floor(rng() * (last - T0) * 0.6);
        const buckets = layoutBuckets(start, last + Math.floor(rng() * 600_000), INTERVAL_S, 1 + Math.floor(rng() * 30));
        const filters: Record<string, string> = rng() < 0.3 ? { queryid: "-9000000000000000001" } : {};
        const q: GroupedChangeQuery = { probe, connectionId, columns: COLUMNS, groupBy, buckets, intervalSeconds: INTERVAL_S, rates, filters };
        const fast = await differencedGroupChanges(store.db, q);
        const where = `seed ${seed}, by [${groupBy}], rates ${rates}, filters ${JSON.stringify(filters)}`;
        // Sums are always answerable by difference; rates only where runs have one interval length.
        if (!rates) expect(fast, where).toBeDefined();
        if (!fast) continue;
        differenced++;
        expectSame(fast, await scannedGroupChanges(store.db, q), q, where);
      }
    }
    if (seed % 2 === 0) expect(differenced, "regular spacing: rates are differenced too").toBe(groupings.length * 2);
  });

  it.each(SEEDS)("seed %i: the grouped metrics query by difference equals the pipeline on raw rows", async (seed) => {
    const { connectionId, rng, last } = await writtenHistory(`grouped-${seed}`, seed, 7_727);
    const { statements, watched } = watching(store);
    let differenced = 0;
    let wide = 0;
    const cases = ["database_name", "queryid,database_name", "database_name,queryid,userid,dbid,toplevel"].flatMap((groupBy) =>
      // Rates need runs of one interval length; deltas are differenced on irregular spacing too.
      ["calls_per_sec,calls_delta,total_exec_time_pct,total_exec_time_delta", "calls_delta,total_exec_time_delta"].map((metrics) => ({ groupBy, metrics })),
    );
    for (const { groupBy, metrics } of cases) {
      const start = T0 + Math.floor(rng() * (last - T0) * 0.6);
      const end = last + Math.floor(rng() * 600_000);
      const q = {
        probeName: probe.name,
        connectionIds: [connectionId],
        window: { start, end },
        buckets: 1 + Math.floor(rng() * 30),
        metrics,
        groupBy,
        filters: rng() < 0.3 ? { database_name: "shop" } : {},
      };
      statements.length = 0;
      const auto = await runGroupedMetricsQuery(watched, q);
      // Read by difference: the irregular intervals were read, the raw rows (fetchSampleRows' order) were not.
      const byDifference =
        statements.some((sql) => sql.includes("__irregular")) && !statements.some((sql) => sql.includes('ORDER BY "connection_id", "collected_at"'));
      if (byDifference) differenced++;
      // Narrow buckets are read raw, without asking whether the records could answer.
      if (wideEnoughToDifference(layoutBuckets(start, end, INTERVAL_S, q.buckets), INTERVAL_S)) wide++;
      else expect(byDifference || statements.length > 2, `${statements.join("\n")}: narrow buckets read raw, after the context, in one statement`).toBe(false);
      const reference = await runGroupedMetricsQuery(store.db, q, "pipeline");
      const where = `seed ${seed}, ${metrics} by ${groupBy}, ${JSON.stringify(q.filters)}`;
      expect(
        auto.map((x) => [x.name, x.entity]),
        where,
      ).toEqual(reference.map((x) => [x.name, x.entity]));
      auto.forEach((series, i) =>
        series.data.forEach((point, k) => {
          const want = reference[i].data[k].value;
          const label = `${where}, ${series.name} ${JSON.stringify(series.entity)}, point ${k}`;
          if (want === null) expect(point.value, label).toBeNull();
          else expect(point.value, label).toBeCloseTo(want, 6);
        }),
      );
    }
    expect(differenced, "every delta query over wide buckets is read by difference").toBeGreaterThanOrEqual(Math.min(3, wide));
    if (seed % 2 === 0) expect(differenced, "regular spacing: every query over wide buckets is read by difference").toBe(wide);
  });

  it.each([2, 4, 6])("seed %i, evenly spaced: read without the sample sequence, in one statement, equal to the scan", async (seed) => {
    const connectionId = await addConnection(store.db, `even-${seed}`);
    const rows = statementHistory(seed, { start: T0, samples: [40, 80], spacings: [300], churn: 0.05, reset: 0.04, drop: 0.03, missing: 0.03 });
    const rng = seededRandom(seed * 31);
    await writeShuffled(store, connectionId, rows, rng);
    const last = Date.parse(rows[rows.length - 1].collected_at as string);
    const { statements, watched } = watching(store);
    for (const groupBy of [[], ["database_name"], probe.keys]) {
      for (const rates of [false, true]) {
        const start = T0 + Math.floor(rng() * (last - T0) * 0.6);
        const buckets = layoutBuckets(start, last + Math.floor(rng() * 600_000), INTERVAL_S, 1 + Math.floor(rng() * 30));
        const q: GroupedChangeQuery = {
          probe,
          connectionId,
          columns: COLUMNS,
          groupBy,
          buckets,
          intervalSeconds: INTERVAL_S,
          rates,
          cellsFrom: Number.NEGATIVE_INFINITY,
          onlyEven: true,
        };
        statements.length = 0;
        const fast = await differencedGroupChanges(watched, q);
        const where = `seed ${seed}, by [${groupBy}], rates ${rates}`;
        expect(fast, where).toBeDefined();
        expect(
          statements.some((sql) => /entities_checked FROM/.test(sql)),
          `${where}: the sequence is not read`,
        ).toBe(false);
        expect(statements, `${where}: one statement (spaced-read.ts)`).toHaveLength(1);
        expectSame(fast!, await scannedGroupChanges(store.db, q), q, where);
      }
    }
  });

  it.each([2, 3, 4, 5])(
    "seed %i, evenly spaced but for a few missed and late samples: read without the sample sequence, equal to it and to the scan",
    async (seed) => {
      const connectionId = await addConnection(store.db, `few-irregular-${seed}`);
      const spacings = [...Array<number>(24).fill(300), 600, 301, 900, 150];
      const rows = statementHistory(seed, { start: T0, samples: [60, 90], spacings, churn: 0.05, reset: 0.04, drop: 0.03, missing: 0.03 });
      const rng = seededRandom(seed * 37);
      await writeShuffled(store, connectionId, rows, rng);
      const last = Date.parse(rows[rows.length - 1].collected_at as string);
      const { statements, watched } = watching(store);
      // Judged by the probe's interval, and by a shorter one: then nearly every change is of another length, and the
      // median spacing decides what is a gap.
      for (const [groupBy, interval] of [
        [[], INTERVAL_S],
        [["database_name"], INTERVAL_S],
        [probe.keys, INTERVAL_S],
        [["database_name"], 60],
      ] as const) {
        for (const rates of [false, true]) {
          const start = T0 + Math.floor(rng() * (last - T0) * 0.6);
          const buckets = layoutBuckets(start, last + Math.floor(rng() * 600_000), interval, 1 + Math.floor(rng() * 30));
          const q: GroupedChangeQuery = { probe, connectionId, columns: COLUMNS, groupBy, buckets, intervalSeconds: interval, rates };
          const where = `seed ${seed}, by [${groupBy}] at ${interval} s, rates ${rates}`;
          statements.length = 0;
          const fromFacts = await differencedChanges(watched, { ...q, cellsFrom: Number.NEGATIVE_INFINITY, onlyEven: true });
          expect(fromFacts, where).toBeDefined();
          expect(
            statements.some((sql) => /entities_checked FROM/.test(sql)),
            `${where}: the sequence is not read`,
          ).toBe(false);
          expect(statements, `${where}: one statement (spaced-read.ts)`).toHaveLength(1);
          expect(plain(fromFacts!), where).toEqual(plain((await differencedChanges(store.db, q))!, true));
          expectSame(fromFacts!.groups, await scannedGroupChanges(store.db, q), q, where);
        }
      }
    },
  );

  /**
   * The answer as data: each run as its bucket and intervals, each group's values as [bucket, value] pairs. On the
   * expected side (`approx`) the values match within floating-point tolerance: both sides sum the same changes, in
   * an order the datastore does not fix.
   */
  const plain = ({ runs, groups, ...rest }: DifferencedChanges, approx = false) => {
    const values = (m: Map<number, number | null>) => [...m].map(([k, v]) => [k, approx && v !== null ? expect.closeTo(v, 9) : v]);
    return {
      ...rest,
      groups: groups.map((g) => ({ group: g.group, delta: g.delta.map(values), rate: g.rate.map(values) })),
      runs: runs.map((r) => [r.bucket, Array.from({ length: r.length }, (_, i) => [r.from(i), r.to(i)])]),
    };
  };

  it("counts the same intervals from evenly spaced facts as from the read sequence, at the window's edges", async () => {
    const connectionId = await addConnection(store.db, "even-edges");
    const rows = statementHistory(8, { start: T0, samples: [40, 40], spacings: [300], churn: 0.05, reset: 0.04, drop: 0.03, missing: 0.03 });
    await writeSamples(store.db, { connectionId, probe: probe.name, rows: rows as never });
    const at = (sample: number, plusSeconds = 0) => T0 + sample * 300_000 + plusSeconds * 1000;
    // [start, end, collection interval (s)]: windows starting and ending on a sample, a millisecond off it, and
    // inside one interval (5 minutes: a gap when judged by a 60 s interval, as no interval starts in the window).
    const windows = Array.from({ length: 30 }, (_, i) => [
      [at(i + 3), at(i + 8), 300],
      [at(i + 3, 0.001), at(i + 8, -0.001), 300],
    ]).flat();
    for (const [start, end, interval] of [...windows, [at(10, 60), at(10, 240), 60], [at(10, 60), at(11, 240), 60], [at(10, 60), at(10, 240), 300]]) {
      for (const rates of [false, true]) {
        const q: GroupedChangeQuery = {
          probe,
          connectionId,
          columns: COLUMNS,
          groupBy: ["database_name"],
          buckets: layoutBuckets(start, end, interval, 3),
          intervalSeconds: interval,
          rates,
        };
        const where = `[${start - T0}, ${end - T0}] by ${interval} s, rates ${rates}`;
        const fromFacts = await differencedChanges(store.db, { ...q, cellsFrom: Number.NEGATIVE_INFINITY, onlyEven: true });
        expect(fromFacts, where).toBeDefined();
        expect(plain(fromFacts!), where).toEqual(plain((await differencedChanges(store.db, q))!, true));
      }
    }
  });

  it("gives the pipeline's zeros and groups: a bucket inside one interval, a bucket of invalid changes, a database gone before the window", async () => {
    const connectionId = await addConnection(store.db, "edges");
    const minutes = [0, 5, 10, 15, 20, 30, 35, 40]; // 20 -> 30 spans the bucket [25, 30)
    const rows = minutes.flatMap((m, i) =>
      ["a", "b", ...(i < 2 ? ["gone"] : [])].map((db) => ({
        collected_at: new Date(T0 + m * 60_000).toISOString(),
        database_name: db,
        queryid: "1",
        userid: 10,
        dbid: 1,
        toplevel: true,
        query: "q",
        calls: m === 35 ? 1 : 100 + 10 * i,
        total_exec_time: 5 * i,
        stats_reset: null, // every call count drops at 35: no valid change there
      })),
    );
    await writeSamples(store.db, { connectionId, probe: probe.name, rows: rows as never });
    const q = {
      probeName: probe.name,
      connectionIds: [connectionId],
      window: { start: T0 + 15 * 60_000, end: T0 + 40 * 60_000 },
      buckets: 5,
      metrics: "calls_delta",
      groupBy: "database_name",
    };
    const { statements, watched } = watching(store);
    // Buckets of one interval each are read raw (wideEnoughToDifference): read these by difference all the same.
    const tuned = NARROW_BUCKETS.intervals;
    NARROW_BUCKETS.intervals = 0;
    const auto = await runGroupedMetricsQuery(watched, q).finally(() => (NARROW_BUCKETS.intervals = tuned));
    expect(statements.some((sql) => sql.includes("__irregular"))).toBe(true);
    const reference = await runGroupedMetricsQuery(store.db, q, "pipeline");
    expect(auto).toEqual(reference);
    expect(auto.map((s) => s.entity.database_name)).toEqual(["a", "b", "gone"]);
    // Buckets [15,20) [20,25) [25,30) [30,35) [35,40) and the end point: 20 -> 30 spans [25, 30); 35 has no valid change.
    expect(auto[0].data.map((p) => p.value)).toEqual([10, 10, 0, 10, 0, 169]); // 35 -> 40 grows from the drop again
    expect(auto[2].data.map((p) => p.value)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("falls back to the scan when a sample in range was written before irregular intervals were recorded", async () => {
    const connectionId = await addConnection(store.db, "legacy");
    const rows = history(2);
    await writeSamples(store.db, { connectionId, probe: probe.name, rows: rows as never });
    const last = Date.parse(rows[rows.length - 1].collected_at as string);
    const q: GroupedChangeQuery = {
      probe,
      connectionId,
      columns: COLUMNS,
      groupBy: [],
      buckets: layoutBuckets(T0, last, INTERVAL_S, 10),
      intervalSeconds: INTERVAL_S,
    };
    expect(await differencedGroupChanges(store.db, q)).toBeDefined();
    await store.db.query(
      `UPDATE metrics."pg_stat_statements__changes" SET entities_checked = NULL WHERE connection_id = $1 AND collected_at = (SELECT max(collected_at) FROM metrics."pg_stat_statements__changes" WHERE connection_id = $1)`,
      [connectionId],
    );
    expect(await differencedGroupChanges(store.db, q)).toBeUndefined();
  });
});
