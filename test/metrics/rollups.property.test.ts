/**
 * Property: raw columns and counter metrics over long windows, answered from the time rollups (whole 5-minute
 * and hourly cells in each bucket, raw rows for the rest), equal the pure pipeline on the raw rows (counter
 * rates up to floating-point rounding), for random multi-day
 * histories (entities appearing and vanishing, nulls, gaps, excluded rows) written in shuffled batches, any
 * window and bucket count, every aggregation; also when the rollups are complete only from a later time (a
 * datastore upgraded with history). Corrupting the cells changes the answer: the rollups are really read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { fetchSampleRows } from "../../src/samples/read-raw-rows.ts";
import { AGGREGATIONS, type Aggregation } from "../../src/metrics/aggregate.ts";
import { layoutBuckets } from "../../src/metrics/buckets.ts";
import { seriesOfOneEntity } from "../../src/samples/series-from-entity-cells.ts";
import { rollupPlanFor } from "../../src/metrics/rollup-plan.ts";
import { parseMetricList } from "../../src/metrics/metric-names.ts";
import { runMetricsQuery } from "../../src/queries/query.ts";
import { groupSamples } from "../../src/metrics/samples.ts";
import { borrowLimitMs, computeSeries } from "../../src/metrics/series.ts";
import { findProbe } from "../../src/probes/index.ts";
import { counting } from "../support/counting-driver.ts";
import { type TestDatastore, addConnection, migratedDatastore } from "../support/datastore.ts";
import { type Case, T0, history, random, writeShuffled } from "../support/random-history.ts";

const CASES: Case[] = [
  {
    probe: "pg_stat_database",
    key: "database_name",
    entities: ["a", "b", "c"],
    columns: { numbackends: "int", xact_commit: "int", blk_read_time: "quarter", active_time: "quarter" },
    marker: "stats_reset",
    metrics: ["numbackends", "xact_commit", "blk_read_time", "xact_commit_per_sec", "xact_commit_delta", "blk_read_time_pct", "active_time_sessions"],
  },
  {
    probe: "pg_sys_network_info",
    key: "interface_name",
    entities: ["eth0", "eth1", "lo"],
    columns: { rx_bytes: "int", tx_bytes: "int" },
    metrics: ["rx_bytes", "tx_bytes", "rx_bytes_per_sec", "tx_bytes_delta"],
  },
];
/** Mostly a minute apart (twice the collection interval, so gaps are judged by the spacing), often a gap of 5 minutes to 2 hours. */
const GAPPY = [...Array(30).fill(60), 30, 90, 300, 1200, 2400, 7200, 7200];
/** Steady: hours without a gap, where counter metrics can come from rollups too. */
const STEADY = [...Array(400).fill(60), 30, 90, 7200];

/** Rates summed in another order differ in the last bits: numbers within 1e-9 (relative) count as equal. */
function roundedLike(actual: Array<Array<number | null>>, expected: Array<Array<number | null>>) {
  return actual.map((series, i) =>
    series.map((v, j) => {
      const e = expected[i]?.[j];
      return typeof v === "number" && typeof e === "number" && Math.abs(v - e) <= 1e-9 * Math.max(1, Math.abs(e)) ? e : v;
    }),
  );
}
const INTERVAL = 30;
const HOUR = 3_600_000;

describe("time rollups give the pipeline's answers for raw columns and counter metrics", () => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = $1", [INTERVAL]);
  });
  afterAll(() => store.close());

  it.each(Array.from({ length: 10 }, (_, i) => 2000 + i))("on a random multi-day history, seed %i", async (seed) => {
    const rng = random(seed);
    const spec = CASES[seed % CASES.length];
    const probe = findProbe(spec.probe)!;
    const connectionId = await addConnection(store.db, `rollups-${seed}`);
    const rows = history(rng, spec, rng.int(1500, 3000), Math.floor(seed / 2) % 2 ? STEADY : GAPPY);
    await writeShuffled(store, rng, connectionId, spec.probe, rows, 120);
    const first = Date.parse(rows[0].collected_at as string);
    const last = Math.max(...rows.map((r) => Date.parse(r.collected_at as string)));
    const table = `metrics.${spec.probe}__levels`;
    // Every other seed: an upgraded datastore, whose cells are complete only from some hour in the history.
    let levelsFrom = Number.NEGATIVE_INFINITY;
    if (seed % 4 >= 2) {
      levelsFrom = Math.ceil((first + rng.next() * (last - first)) / HOUR) * HOUR;
      await store.db.query("UPDATE connections SET levels_from = $2 WHERE id = $1", [connectionId, new Date(levelsFrom).toISOString()]);
      await store.db.query(`DELETE FROM ${table} WHERE connection_id = $1 AND cell_start < $2`, [connectionId, new Date(levelsFrom).toISOString()]);
    }

    const metrics = spec.metrics.join(",");
    const reference = async (start: number, end: number, requestedBuckets: number, aggregation: (typeof AGGREGATIONS)[number]) => {
      const buckets = layoutBuckets(start, end, INTERVAL, requestedBuckets);
      const columns = [...Object.keys(spec.columns), ...(spec.marker ? [spec.marker] : [])];
      const raw = await fetchSampleRows(store.db, {
        probe,
        connectionIds: [connectionId],
        from: start - borrowLimitMs(buckets),
        to: end,
        columns,
        filters: {},
      });
      return computeSeries({
        probe,
        metrics: parseMetricList(metrics, probe),
        samples: groupSamples(probe, raw),
        buckets,
        intervalSeconds: INTERVAL,
        aggregation,
      });
    };
    let planned = 0;
    for (let q = 0; q < 20; q++) {
      const start = first - rng.int(0, 7200) * 1000 + rng.int(0, Math.floor((last - first) / 1000)) * 1000;
      const end = Math.min(start + rng.int(2 * 3600, 4 * 86_400) * 1000, Date.now());
      const requestedBuckets = rng.pick([1, 2, 3, 7, 20, 60, 150]);
      const aggregation = rng.pick(AGGREGATIONS);
      if (rollupPlanFor(layoutBuckets(start, end, INTERVAL, requestedBuckets), levelsFrom)) planned++;
      const answer = await runMetricsQuery(store.db, {
        probeName: spec.probe,
        connectionIds: [connectionId],
        window: { start, end },
        buckets: requestedBuckets,
        aggregation,
        metrics,
      });
      const context = { seed, query: q, start: new Date(start).toISOString(), end: new Date(end).toISOString(), requestedBuckets, aggregation };
      const expected = await reference(start, end, requestedBuckets, aggregation);
      expect({
        ...context,
        series: roundedLike(
          answer.series.map((s) => s.data.map((p) => p.value)),
          expected,
        ),
      }).toEqual({ ...context, series: expected });
    }
    expect(planned).toBeGreaterThan(0);

    // The rollups are what answered: a whole-history maximum moves when every cell's maximum does.
    const start = Math.max(first, levelsFrom === Number.NEGATIVE_INFINITY ? first : levelsFrom);
    const whole = () =>
      runMetricsQuery(store.db, {
        probeName: spec.probe,
        connectionIds: [connectionId],
        window: { start, end: last },
        buckets: 2,
        aggregation: "max",
        metrics: spec.metrics[0],
      });
    if (last - start < 8 * HOUR) return;
    const before = (await whole()).series[0].data.map((p) => p.value);
    expect(before).toEqual((await reference(start, last, 2, "max"))[0]);
    const column = `"${spec.metrics[0]}:max"`;
    await store.db.query(`UPDATE ${table} SET ${column} = ${column} + 1000000 WHERE connection_id = $1`, [connectionId]);
    const after = (await whole()).series[0].data.map((p) => p.value);
    expect(after[0]).toBe((before[0] as number) + 1_000_000);
  });

  it("borrows the sample before the window when the window opens in a gap, as the pipeline does", async () => {
    const connectionId = await addConnection(store.db, "rollups-gap");
    const minute = 60_000;
    // Six hours a minute apart, an hour without samples, six more hours.
    const times = [...Array.from({ length: 360 }, (_, i) => T0 + i * minute), ...Array.from({ length: 360 }, (_, i) => T0 + 420 * minute + i * minute)];
    await writeShuffled(
      store,
      random(1),
      connectionId,
      "pg_stat_database",
      times.map((t, i) => ({ collected_at: new Date(t).toISOString(), database_name: "a", numbackends: i % 17 })),
      60,
    );
    const query = (start: number, end: number) =>
      runMetricsQuery(store.db, {
        probeName: "pg_stat_database",
        connectionIds: [connectionId],
        window: { start, end },
        buckets: 10,
        aggregation: "avg",
        metrics: "numbackends",
      });
    const expected = async (start: number, end: number) => {
      const probe = findProbe("pg_stat_database")!;
      const buckets = layoutBuckets(start, end, INTERVAL, 10);
      const raw = await fetchSampleRows(store.db, {
        probe,
        connectionIds: [connectionId],
        from: start - borrowLimitMs(buckets),
        to: end,
        columns: ["numbackends"],
        filters: {},
      });
      return computeSeries({
        probe,
        metrics: parseMetricList("numbackends", probe),
        samples: groupSamples(probe, raw),
        buckets,
        intervalSeconds: INTERVAL,
        aggregation: "avg",
      })[0];
    };
    const inGap = T0 + 360 * minute; // a minute after the last sample before the gap: the first bucket is empty
    const gapAnswer = (await query(inGap, inGap + 5 * HOUR)).series[0].data.map((p) => p.value);
    expect(gapAnswer).toEqual(await expected(inGap, inGap + 5 * HOUR));
    expect(gapAnswer[0]).toBe(359 % 17);
  });

  it("carries a lone sample before the window into an empty first bucket, or none for a connection newer than the window, from the rollups in one statement", async () => {
    const minute = 60_000;
    const start = T0 + 10 * HOUR;
    const probe = findProbe("pg_stat_database")!;
    for (const lone of [true, false]) {
      const connectionId = await addConnection(store.db, lone ? "rollups-lone" : "rollups-new");
      // Samples a minute apart from 40 minutes into the window; with `lone`, one more a minute before it (within
      // three collection intervals of the window's first point, so it is carried at any judged interval).
      const times = [...(lone ? [start - minute] : []), ...Array.from({ length: 260 }, (_, i) => start + (40 + i) * minute)];
      await writeShuffled(
        store,
        random(3),
        connectionId,
        "pg_stat_database",
        times.map((t, i) => ({ collected_at: new Date(t).toISOString(), database_name: "a", numbackends: i === 0 && lone ? 7 : i % 17 })),
        60,
      );
      const window = { start, end: start + 5 * HOUR };
      const { driver, statements } = counting(store.db);
      const answer = (
        await runMetricsQuery(driver, {
          probeName: "pg_stat_database",
          connectionIds: [connectionId],
          window,
          buckets: 10,
          aggregation: "avg",
          metrics: "numbackends",
        })
      ).series[0].data.map((p) => p.value);
      const buckets = layoutBuckets(window.start, window.end, INTERVAL, 10);
      const raw = await fetchSampleRows(store.db, {
        probe,
        connectionIds: [connectionId],
        from: window.start - borrowLimitMs(buckets),
        to: window.end,
        columns: ["numbackends"],
        filters: {},
      });
      const [expected] = computeSeries({
        probe,
        metrics: parseMetricList("numbackends", probe),
        samples: groupSamples(probe, raw),
        buckets,
        intervalSeconds: INTERVAL,
        aggregation: "avg",
      });
      expect(answer, lone ? "lone" : "new").toEqual(expected);
      expect(answer[0]).toBe(lone ? 7 : null);
      // The context, then the rollups: no raw read after them.
      expect(statements, lone ? "lone" : "new").toHaveLength(2);
      expect(statements[1]).toContain("pg_stat_database__levels");
    }
  });

  describe("counter rates around a stopped collector", () => {
    const minute = 60_000;
    const probe = () => findProbe("pg_stat_database")!;
    const metrics = "xact_commit_per_sec,xact_commit_delta";
    /** Twelve hours a minute apart (the interval is 30 s), commits rising by a varying amount; then, after `gap` minutes without samples, two more hours. */
    async function stoppedHistory(name: string, gap: number, every = 1) {
      const connectionId = await addConnection(store.db, name);
      const times = [
        ...Array.from({ length: 720 / every }, (_, i) => T0 + i * every * minute),
        ...Array.from({ length: 120 / every }, (_, i) => T0 + (720 + gap + i * every) * minute),
      ];
      let commits = 0;
      const rows = times.map((t, i) => ({ collected_at: new Date(t).toISOString(), database_name: "a", xact_commit: (commits += 100 + ((i * 37) % 90)) }));
      await writeShuffled(store, random(2), connectionId, "pg_stat_database", rows, 60);
      return { connectionId, end: times[times.length - 1] };
    }
    const values = async (connectionId: number, end: number, aggregation = "avg") =>
      (
        await runMetricsQuery(store.db, {
          probeName: "pg_stat_database",
          connectionIds: [connectionId],
          window: { start: T0, end },
          buckets: 6,
          aggregation,
          metrics,
        })
      ).series.map((x) => x.data.map((p) => p.value));
    const expected = async (connectionId: number, end: number, aggregation: Aggregation = "avg") => {
      const buckets = layoutBuckets(T0, end, INTERVAL, 6);
      const raw = await fetchSampleRows(store.db, {
        probe: probe(),
        connectionIds: [connectionId],
        from: T0 - borrowLimitMs(buckets),
        to: end,
        columns: ["xact_commit", "stats_reset"],
        filters: {},
      });
      return computeSeries({
        probe: probe(),
        metrics: parseMetricList(metrics, probe()),
        samples: groupSamples(probe(), raw),
        buckets,
        intervalSeconds: INTERVAL,
        aggregation,
      });
    };
    /** Doubles the stored rate facts of the connection's cells, all of them or only those holding an interval longer than `longerThan` ms. */
    const corrupt = (connectionId: number, longerThan = 0) =>
      store.db.query(
        `UPDATE metrics.pg_stat_database__change_cells SET "xact_commit:ratio_sum" = "xact_commit:ratio_sum" * 2, "xact_commit:ratio_max" = "xact_commit:ratio_max" * 2 WHERE connection_id = $1 AND max_span_ms > $2`,
        [connectionId, longerThan],
      );

    it("are read from the change cells where no interval is long, and where one is a gap, reading its cells from the stored changes", async () => {
      const steady = await stoppedHistory("rates-steady", 0);
      const gappy = await stoppedHistory("rates-gap", 20); // a 21-minute interval: a gap by any median the cells allow (at most 90 s)
      for (const aggregation of ["avg", "max"] as const) {
        for (const { connectionId, end } of [steady, gappy])
          expect(roundedLike(await values(connectionId, end, aggregation), await expected(connectionId, end, aggregation))).toEqual(
            await expected(connectionId, end, aggregation),
          );
      }
      const before = await values(gappy.connectionId, gappy.end);
      // The cells holding the gap are not what answered...
      await corrupt(gappy.connectionId, 3 * minute);
      expect(roundedLike(await values(gappy.connectionId, gappy.end), before)).toEqual(before);
      // ...the others are, as for the steady history.
      for (const { connectionId, end } of [steady, gappy]) {
        const was = await values(connectionId, end);
        await corrupt(connectionId);
        expect((await values(connectionId, end))[0][1]).not.toBeCloseTo(was[0][1] as number, 3);
      }
    });

    it("are read from the stored changes where a long interval may not be a gap: a few missed rounds, or samples sparser than the interval", async () => {
      // A four-minute interval: a gap by these samples' median (a minute), not by every median the cells allow (up
      // to three collection intervals, 90 s: gaps are then over 270 s).
      const missed = await stoppedHistory("rates-missed", 3);
      // Every ten minutes under a 30-second interval: the median spacing is ten minutes, and no interval is a gap.
      const sparse = await stoppedHistory("rates-sparse", 0, 10);
      for (const { connectionId, end } of [missed, sparse]) {
        const want = await expected(connectionId, end);
        expect(roundedLike(await values(connectionId, end), want)).toEqual(want);
        await corrupt(connectionId);
        expect(roundedLike(await values(connectionId, end), want)).toEqual(want);
      }
      expect((await expected(sparse.connectionId, sparse.end))[0].some((v) => v !== null)).toBe(true);
    });
  });

  it("stays exact when two writers (say an import beside the collector) write one connection's samples at once", async () => {
    const connectionId = await addConnection(store.db, "rollups-two-writers");
    const others = [openPg(store.url!), openPg(store.url!)];
    try {
      const minute = 60_000;
      // Interleaved minutes in batches of ten: both writers touch the same cells at the same time.
      const batches = Array.from({ length: 24 }, (_, b) =>
        Array.from({ length: 10 }, (_, i) => T0 + (Math.floor(b / 2) * 20 + i * 2 + (b % 2)) * minute).flatMap((t) =>
          ["a", "b"].map((d) => ({ collected_at: new Date(t).toISOString(), database_name: d, numbackends: (t / minute) % 13, xact_commit: t / 1000 })),
        ),
      );
      await Promise.all(
        others.map(async (db, w) => {
          for (let b = w; b < batches.length; b += 2) await writeSamples(db, { connectionId, probe: "pg_stat_database", rows: batches[b] });
        }),
      );
      const probe = findProbe("pg_stat_database")!;
      const end = T0 + 239 * minute;
      for (const metrics of ["numbackends", "xact_commit_per_sec"]) {
        const answer = (
          await runMetricsQuery(store.db, {
            probeName: "pg_stat_database",
            connectionIds: [connectionId],
            window: { start: T0, end },
            buckets: 4,
            aggregation: "sum",
            metrics,
          })
        ).series[0].data.map((p) => p.value);
        const buckets = layoutBuckets(T0, end, INTERVAL, 4);
        const raw = await fetchSampleRows(store.db, {
          probe,
          connectionIds: [connectionId],
          from: T0 - borrowLimitMs(buckets),
          to: end,
          columns: ["numbackends", "xact_commit", "stats_reset"],
          filters: {},
        });
        const expected = computeSeries({
          probe,
          metrics: parseMetricList(metrics, probe),
          samples: groupSamples(probe, raw),
          buckets,
          intervalSeconds: INTERVAL,
          aggregation: "sum",
        })[0];
        expect(roundedLike([answer], [expected])).toEqual([expected]);
      }
      // One database's series, from the entity cells both writers kept (whole hours in 2-hour buckets).
      const window = { start: T0, end: T0 + 240 * minute };
      const buckets = layoutBuckets(window.start, window.end, INTERVAL, 2);
      const fromCells = await seriesOfOneEntity(store.db, {
        probe,
        metrics: parseMetricList("xact_commit_per_sec", probe),
        connectionIds: [connectionId],
        buckets,
        intervalSeconds: INTERVAL,
        aggregation: "sum",
        levelsFrom: Number.NEGATIVE_INFINITY,
        filters: { database_name: "a" },
        borrowFrom: window.start - borrowLimitMs(buckets),
      });
      expect(fromCells.size).toBe(1);
      const filtered = (
        await runMetricsQuery(store.db, {
          probeName: "pg_stat_database",
          connectionIds: [connectionId],
          window,
          buckets: 2,
          aggregation: "sum",
          metrics: "xact_commit_per_sec",
          filters: { database_name: "a" },
        })
      ).series[0].data.map((p) => p.value);
      const raw = await fetchSampleRows(store.db, {
        probe,
        connectionIds: [connectionId],
        from: window.start - borrowLimitMs(buckets),
        to: window.end,
        columns: ["xact_commit", "stats_reset"],
        filters: { database_name: "a" },
      });
      const expected = computeSeries({
        probe,
        metrics: parseMetricList("xact_commit_per_sec", probe),
        samples: groupSamples(probe, raw),
        buckets,
        intervalSeconds: INTERVAL,
        aggregation: "sum",
      })[0];
      expect(roundedLike([filtered], [expected])).toEqual([expected]);
    } finally {
      await Promise.all(others.map((d) => d.close()));
    }
  });
});
