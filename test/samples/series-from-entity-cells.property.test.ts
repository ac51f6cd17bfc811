/**
 * Property: per-entity counter series over long windows answered from the hourly entity cells (whole hours in
 * each bucket, raw rows for the rest) equal the pure pipeline, for `group_by` over a probe's keys and for a
 * filter naming one entity, on random multi-day histories (entities appearing and vanishing, resets, nulls,
 * excluded rows, gaps) written in shuffled batches or appended in order (the writer's two ways of keeping the
 * cells); also when the cells are complete only from a later hour. Every entity's gauges alone are read from
 * the cells even where few whole hours fit in the buckets, and read the hours that bucket edges cut from the
 * cells' facts over 5-minute parts, whatever the aggregation.
 * Corrupting the cells changes the answers: they are really read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleBounds, sampleSpacings } from "../../src/samples/read-changes.ts";
import { fetchSampleRows } from "../../src/samples/read-raw-rows.ts";
import { AGGREGATIONS } from "../../src/metrics/aggregate.ts";
import { layoutBuckets } from "../../src/metrics/buckets.ts";
import { runGroupedMetricsQuery } from "../../src/queries/grouped-query.ts";
import { parseMetricList } from "../../src/metrics/metric-names.ts";
import { runMetricsQuery } from "../../src/queries/query.ts";
import { entitySeriesFromCells } from "../../src/samples/series-from-entity-cells.ts";
import { ENTITY_CELLS_MS, MIN_COVERED_SHARE, planRollupReads } from "../../src/metrics/rollup-plan.ts";
import { groupSamples } from "../../src/metrics/samples.ts";
import { borrowLimitMs, computeSeries } from "../../src/metrics/series.ts";
import { findProbe } from "../../src/probes/index.ts";
import { type TestDatastore, addConnection, migratedDatastore } from "../support/datastore.ts";
import { type Case, history, random, writeShuffled } from "../support/random-history.ts";

const CASES: Case[] = [
  {
    probe: "pg_stat_database",
    key: "database_name",
    entities: ["a", "b", "c"],
    steady: ["a"],
    columns: { xact_commit: "int", blk_read_time: "quarter", active_time: "quarter", numbackends: "int" },
    marker: "stats_reset",
    metrics: ["xact_commit_per_sec", "xact_commit_delta", "blk_read_time_pct", "active_time_sessions"],
  },
  {
    probe: "pg_sys_network_info",
    key: "interface_name",
    entities: ["eth0", "eth1", "lo"],
    steady: ["eth0"],
    columns: { rx_bytes: "int", tx_bytes: "int" },
    metrics: ["rx_bytes_per_sec", "tx_bytes_delta"],
  },
];
/** A probe whose cells keep no running facts over 5-minute parts (ProbeDefinition.gaugeParts), with a gauge. */
const STATEMENTS: Case = {
  probe: "pg_stat_statements",
  key: "queryid",
  entities: ["101", "102", "103"],
  steady: ["101"],
  columns: { calls: "int", total_exec_time: "quarter", mean_exec_time: "quarter" },
  metrics: ["calls_per_sec"],
  fixed: { database_name: "app", userid: "10", dbid: "5", toplevel: "true" },
};
/** Appending is checked on a probe with several gauges, and on one without the parts, too. */
const APPENDED: Case[] = [
  ...CASES,
  {
    probe: "pg_stat_all_tables",
    key: "relname",
    entities: ["orders", "users", "events"],
    columns: { n_live_tup: "int", n_dead_tup: "int", seq_scan: "int" },
    metrics: [],
    fixed: { database_name: "app", schemaname: "public" },
  },
  STATEMENTS,
];
/** Hours a minute apart, now and then a gap (which sends the windows holding it to the other paths). */
const STEADY = [...Array(2000).fill(60), 7200];
const INTERVAL = 60;
const HOUR = 3_600_000;

/** Rates summed in another order differ in the last bits: numbers within 1e-9 (relative) count as equal. */
const rounded = (actual: Array<number | null>, expected: Array<number | null>) =>
  actual.map((v, j) => {
    const e = expected[j];
    return typeof v === "number" && typeof e === "number" && Math.abs(v - e) <= 1e-9 * Math.max(1, Math.abs(e)) ? e : v;
  });

describe("entity cells give the pipeline's per-entity counter series", () => {
  let store: TestDatastore;
  const answered = { whole: 0, upgraded: 0, gauge: 0, groupedGauge: 0, sparseGauge: 0 };
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = $1", [INTERVAL]);
  });
  afterAll(() => store.close());

  // Each history is written in shuffled batches and queried 16 times: 10 to 30 s a seed on this 2-core machine.
  it.each(Array.from({ length: 8 }, (_, i) => 3000 + i))("on a random multi-day history, seed %i", { timeout: 120_000 }, async (seed) => {
    const rng = random(seed);
    const spec = CASES[seed % CASES.length];
    const probe = findProbe(spec.probe)!;
    const connectionId = await addConnection(store.db, `entity-cells-${seed}`);
    const rows = history(rng, spec, rng.int(1500, 3000), STEADY);
    await writeShuffled(store, rng, connectionId, spec.probe, rows, 120, Math.floor(seed / 4) % 2 === 1);
    const first = Date.parse(rows[0].collected_at as string);
    const last = Math.max(...rows.map((r) => Date.parse(r.collected_at as string)));
    let levelsFrom = Number.NEGATIVE_INFINITY;
    if (seed % 4 >= 2) {
      // An upgraded datastore: cells only from some hour in the history.
      levelsFrom = Math.ceil((first + rng.next() * 0.5 * (last - first)) / HOUR) * HOUR;
      await store.db.query("UPDATE connections SET levels_from = $2 WHERE id = $1", [connectionId, new Date(levelsFrom).toISOString()]);
      await store.db.query(`DELETE FROM metrics.${spec.probe}__entity_cells WHERE connection_id = $1 AND cell_start < $2`, [
        connectionId,
        new Date(levelsFrom).toISOString(),
      ]);
    }

    for (let q = 0; q < 16; q++) {
      const start = first + rng.int(-3600, Math.floor((last - first) / 1000)) * 1000;
      const end = Math.min(start + rng.int(4 * 3600, 3 * 86_400) * 1000, Date.now());
      const requestedBuckets = rng.pick([1, 2, 3, 7, 20, 60]);
      const aggregation = rng.pick(["avg", "avg", "sum", "max", "min", "last"] as const);
      const metrics = spec.metrics.slice(0, rng.int(1, spec.metrics.length)).join(",");
      const base = { probeName: spec.probe, connectionIds: [connectionId], window: { start, end }, buckets: requestedBuckets, aggregation, metrics };
      const context = { seed, query: q, start: new Date(start).toISOString(), end: new Date(end).toISOString(), requestedBuckets, aggregation, metrics };

      const buckets = layoutBuckets(start, end, INTERVAL, requestedBuckets);
      const direct = await entitySeriesFromCells(store.db, {
        probe,
        metrics: parseMetricList(metrics, probe),
        connectionIds: [connectionId],
        buckets,
        intervalSeconds: INTERVAL,
        aggregation,
        levelsFrom,
        filters: {},
        borrowFrom: start - borrowLimitMs(buckets),
      });
      const grouped = await runGroupedMetricsQuery(store.db, { ...base, groupBy: spec.key });
      const reference = await runGroupedMetricsQuery(store.db, { ...base, groupBy: spec.key }, "pipeline");
      if (direct) {
        answered[levelsFrom === Number.NEGATIVE_INFINITY ? "whole" : "upgraded"]++;
        // The cells' own answer, whichever path the grouped query took.
        const expected = reference.map((s) => ({ entity: s.entity[spec.key], name: s.name, values: s.data.map((p) => p.value) }));
        const own = direct
          .get(connectionId)!
          .flatMap((e) => parseMetricList(metrics, probe).map((m, i) => ({ entity: e.entity[0], name: m.name, values: e.values[i] })));
        own.sort(
          (a, b) =>
            expected.findIndex((x) => x.entity === a.entity && x.name === a.name) - expected.findIndex((x) => x.entity === b.entity && x.name === b.name),
        );
        expect({ ...context, own: own.map((o, i) => ({ ...o, values: rounded(o.values, expected[i]?.values ?? []) })) }).toEqual({ ...context, own: expected });
      }
      expect({ ...context, series: grouped.map((s) => s.entity) }).toEqual({
        ...context,
        series: reference.map((s) => s.entity),
      });
      grouped.forEach((s, i) => {
        const expected = reference[i].data.map((p) => p.value);
        expect({
          ...context,
          entity: s.entity,
          name: s.name,
          values: rounded(
            s.data.map((p) => p.value),
            expected,
          ),
        }).toEqual({ ...context, entity: s.entity, name: s.name, values: expected });
      });

      if (spec.probe === "pg_stat_database") {
        const filters = { database_name: rng.pick(spec.entities) };
        const answer = await runMetricsQuery(store.db, { ...base, filters });
        const columns = [...Object.keys(spec.columns), spec.marker!];
        const raw = await fetchSampleRows(store.db, { probe, connectionIds: [connectionId], from: start - borrowLimitMs(buckets), to: end, columns, filters });
        const expected = computeSeries({
          probe,
          metrics: parseMetricList(metrics, probe),
          samples: groupSamples(probe, raw),
          buckets,
          intervalSeconds: INTERVAL,
          aggregation,
        });
        answer.series.forEach((s, i) =>
          expect({
            ...context,
            filters,
            name: s.name,
            values: rounded(
              s.data.map((p) => p.value),
              expected[i],
            ),
          }).toEqual({ ...context, filters, name: s.name, values: expected[i] }),
        );

        // A gauge of one database: from its entity cells' level facts where they answer, else raw.
        const statements: string[] = [];
        const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;
        const gauge = await runMetricsQuery(watched, { ...base, metrics: "numbackends", filters });
        const gaugeRows = await fetchSampleRows(store.db, {
          probe,
          connectionIds: [connectionId],
          from: start - borrowLimitMs(buckets),
          to: end,
          columns: ["numbackends"],
          filters,
        });
        const [gaugeExpected] = computeSeries({
          probe,
          metrics: parseMetricList("numbackends", probe),
          samples: groupSamples(probe, gaugeRows),
          buckets,
          intervalSeconds: INTERVAL,
          aggregation,
        });
        expect({
          ...context,
          filters,
          values: rounded(
            gauge.series[0].data.map((p) => p.value),
            gaugeExpected,
          ),
        }).toEqual({ ...context, filters, values: gaugeExpected });
        if (statements.length === 2 && statements[1].includes("__entity_cells")) answered.gauge++;

        // Every database's gauge beside a counter, from the cells where they answer, else the pipeline's own path.
        statements.length = 0;
        const gaugeQuery = { ...base, metrics: "numbackends,xact_commit_delta", groupBy: spec.key };
        const groupedGauge = await runGroupedMetricsQuery(watched, gaugeQuery);
        const referenceGauge = await runGroupedMetricsQuery(store.db, gaugeQuery, "pipeline");
        expect({ ...context, series: groupedGauge.map((s) => [s.name, s.entity]) }).toEqual({
          ...context,
          series: referenceGauge.map((s) => [s.name, s.entity]),
        });
        groupedGauge.forEach((s, i) => {
          const expected = referenceGauge[i].data.map((p) => p.value);
          expect({
            ...context,
            entity: s.entity,
            name: s.name,
            values: rounded(
              s.data.map((p) => p.value),
              expected,
            ),
          }).toEqual({ ...context, entity: s.entity, name: s.name, values: expected });
        });
        if (statements.length === 2 && statements[1].includes("__entity_cells")) answered.groupedGauge++;

        // Every database's gauge alone: from the cells even where few whole hours fit in the buckets.
        const gaugeAlone = { ...base, metrics: "numbackends", groupBy: spec.key };
        const referenceAlone = await runGroupedMetricsQuery(store.db, gaugeAlone, "pipeline");
        const groupedAlone = await runGroupedMetricsQuery(store.db, gaugeAlone);
        expect({ ...context, series: groupedAlone.map((s) => [s.entity, s.data.map((p) => p.value)]) }).toEqual({
          ...context,
          series: referenceAlone.map((s) => [s.entity, s.data.map((p) => p.value)]),
        });
        const directAlone = await entitySeriesFromCells(store.db, {
          probe,
          metrics: parseMetricList("numbackends", probe),
          connectionIds: [connectionId],
          buckets,
          intervalSeconds: INTERVAL,
          aggregation,
          levelsFrom,
          filters: {},
          borrowFrom: start - borrowLimitMs(buckets),
        });
        if (directAlone) {
          const own = directAlone.get(connectionId)!.map((e) => [{ [spec.key]: e.entity[0] }, e.values[0]]);
          expect({ ...context, own }).toEqual({ ...context, own: referenceAlone.map((s) => [s.entity, s.data.map((p) => p.value)]) });
          if (planRollupReads(buckets, levelsFrom, ENTITY_CELLS_MS).covered < MIN_COVERED_SHARE) answered.sparseGauge++;
        }
      }
    }
  });

  it("answered from the cells in some of those queries, for whole and for upgraded datastores", () => {
    expect(answered.whole).toBeGreaterThan(5);
    expect(answered.upgraded).toBeGreaterThan(2);
    expect(answered.gauge).toBeGreaterThan(3);
    expect(answered.groupedGauge).toBeGreaterThan(3);
    expect(answered.sparseGauge).toBeGreaterThan(3);
  });

  it.each([11, 12, 13, 14, 15])(
    "appending in order (down to one sample per batch, as a collector does) keeps the cells that recomputing from raw rows keeps, seed %i",
    async (seed) => {
      const rng = random(seed);
      const spec = APPENDED[seed % APPENDED.length];
      const rows = history(rng, spec, 600, [60, 60, 60, 61, 7200]);
      const appended = await addConnection(store.db, `entity-cells-appended-${seed}`);
      const recomputed = await addConnection(store.db, `entity-cells-recomputed-${seed}`);
      await writeShuffled(store, rng, appended, spec.probe, rows, 3, true);
      await writeShuffled(store, rng, recomputed, spec.probe, rows, 50);
      const cells = async (connectionId: number) =>
        (
          await store.db.query<Record<string, unknown>>(
            `SELECT * FROM metrics.${spec.probe}__entity_cells WHERE connection_id = $1 ORDER BY cell_start, entity`,
            [connectionId],
          )
        ).map(({ connection_id: _, ...cell }) => cell);
      const kept = await cells(appended);
      const reference = await cells(recomputed);
      expect(kept.length).toBeGreaterThan(30);
      // Sums taken in another order: equal up to rounding.
      const close = (a: Record<string, unknown>, b: Record<string, unknown>) =>
        Object.fromEntries(
          Object.entries(a).map(([k, v]) => [
            k,
            typeof v === "number" && typeof b[k] === "number" && Math.abs(v - (b[k] as number)) <= 1e-9 * Math.max(1, Math.abs(v)) ? b[k] : v,
          ]),
        );
      expect(kept.map((cell, i) => close(cell, reference[i] ?? {}))).toEqual(reference);
    },
  );

  it.each([21, 22])(
    "gives every statement's gauge from whole hours of cells without 5-minute parts, and the rest raw, as the pipeline does (seed %i)",
    { timeout: 120_000 },
    async (seed) => {
      const rng = random(seed);
      const columns = await store.db.query<{ name: string }>(
        "SELECT attname AS name FROM pg_attribute WHERE attrelid = 'metrics.pg_stat_statements__entity_cells'::regclass AND attname LIKE '%:part%'",
      );
      expect(columns).toEqual([]);
      const connectionId = await addConnection(store.db, `entity-cells-statements-${seed}`);
      const rows = history(rng, STATEMENTS, 1500, [60, 60, 60, 61]);
      await writeShuffled(store, rng, connectionId, STATEMENTS.probe, rows, 120, seed % 2 === 0);
      const first = Date.parse(rows[0].collected_at as string);
      const last = Date.parse(rows.at(-1)!.collected_at as string);
      let fromCells = 0;
      for (let q = 0; q < 8; q++) {
        // Windows of 4 to 20 hours whose bucket edges cut hours.
        const start = first + rng.int(0, Math.floor((last - first) / 2000)) * 1000;
        const end = Math.min(start + rng.int(4 * 3600, 20 * 3600) * 1000, last);
        const requestedBuckets = rng.pick([1, 3, 7]);
        const aggregation = rng.pick(["avg", "sum"] as const);
        const base = {
          probeName: STATEMENTS.probe,
          connectionIds: [connectionId],
          window: { start, end },
          buckets: requestedBuckets,
          aggregation,
          metrics: "mean_exec_time",
          // A filter: every entity's gauge alone would be reduced from raw rows in the datastore (gaugesOfEvery).
          filters: { database_name: "app" },
        };
        const context = { seed, query: q, start: new Date(start).toISOString(), end: new Date(end).toISOString(), requestedBuckets, aggregation };
        const statements: string[] = [];
        const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;

        // The cells are read for groups of one entity each: every key.
        const groupBy = findProbe(STATEMENTS.probe)!.keys.join(",");
        const grouped = await runGroupedMetricsQuery(watched, { ...base, groupBy });
        if (statements.some((sql) => sql.includes("__entity_cells"))) fromCells++;
        const reference = await runGroupedMetricsQuery(store.db, { ...base, groupBy }, "pipeline");
        expect({ ...context, series: grouped.map((s) => [s.entity, s.data.map((p) => p.value)]) }).toEqual({
          ...context,
          series: reference.map((s) => [s.entity, s.data.map((p) => p.value)]),
        });
      }
      expect(fromCells).toBeGreaterThan(2);
    },
  );

  it("reads the cells: corrupting them moves a grouped and a filtered answer", async () => {
    const rng = random(7);
    const spec = CASES[0];
    const connectionId = await addConnection(store.db, "entity-cells-corrupt");
    // Unequal spacing: reading by difference cannot answer rates, so the grouped query reads the cells too.
    const rows = history(rng, spec, 24 * 60, [59, 60, 61]);
    await writeShuffled(store, rng, connectionId, spec.probe, rows, 90);
    const start = Date.parse(rows[0].collected_at as string) + HOUR;
    const window = { start, end: start + 20 * HOUR };
    const query = { probeName: spec.probe, connectionIds: [connectionId], window, buckets: 4, aggregation: "sum", metrics: "xact_commit_per_sec" };
    const grouped = async () =>
      (await runGroupedMetricsQuery(store.db, { ...query, groupBy: "database_name" })).find((s) => s.entity.database_name === "a")!.data[1].value;
    const filtered = async () => (await runMetricsQuery(store.db, { ...query, filters: { database_name: "a" } })).series[0].data[1].value;
    const before = [await grouped(), await filtered()];
    expect(before[0]).toBeCloseTo(before[1]!, 6);
    await store.db.query(
      `UPDATE metrics.pg_stat_database__entity_cells SET "xact_commit:ratio_sum" = "xact_commit:ratio_sum" + 1000 WHERE connection_id = $1 AND entity = '{a}'`,
      [connectionId],
    );
    // Bucket 1 (5 to 10 hours in) holds whole hours: both sums of rates move by a million per hour read from the cells.
    const moved = [(await grouped())! - before[0]!, (await filtered())! - before[1]!];
    expect(moved[0]).toBeGreaterThanOrEqual(3_999_000);
    expect(moved[1]).toBeCloseTo(moved[0], 3);
  });

  it("reads a database's gauge from the cells' level facts, and raw rows where a cell has none (written before migration 25)", async () => {
    const rng = random(8);
    const spec = CASES[0];
    const probe = findProbe(spec.probe)!;
    const connectionId = await addConnection(store.db, "entity-cells-gauge");
    const rows = history(rng, spec, 24 * 60, [60]);
    await writeShuffled(store, rng, connectionId, spec.probe, rows, 90);
    const start = Date.parse(rows[0].collected_at as string) + HOUR;
    const query = {
      probeName: spec.probe,
      connectionIds: [connectionId],
      window: { start, end: start + 20 * HOUR },
      buckets: 4,
      aggregation: "avg",
      metrics: "numbackends",
      filters: { database_name: "a" },
    };
    const answer = async () => (await runMetricsQuery(store.db, query)).series[0].data.map((p) => p.value);
    // Every aggregation from the cells (two statements: the context and the cells), as the pipeline gives it.
    for (const aggregation of AGGREGATIONS) {
      const statements: string[] = [];
      const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;
      const fromCells = await runMetricsQuery(watched, { ...query, aggregation });
      const buckets = layoutBuckets(query.window.start, query.window.end, INTERVAL, 4);
      const raw = await fetchSampleRows(store.db, {
        probe,
        connectionIds: [connectionId],
        from: start - borrowLimitMs(buckets),
        to: query.window.end,
        columns: ["numbackends"],
        filters: query.filters,
      });
      const [reference] = computeSeries({
        probe,
        metrics: parseMetricList("numbackends", probe),
        samples: groupSamples(probe, raw),
        buckets,
        intervalSeconds: INTERVAL,
        aggregation,
      });
      expect({ aggregation, statements: statements.length, values: fromCells.series[0].data.map((p) => p.value) }).toEqual({
        aggregation,
        statements: 2,
        values: reference,
      });
    }
    const before = await answer();
    expect(before[1]).not.toBeNull();
    // Every value in the cells 1000 higher: bucket 1 (5 to 10 hours in, at least 4 of them whole hours) moves by 800 or more.
    await store.db.query(
      `UPDATE metrics.pg_stat_database__entity_cells SET "numbackends:sum" = "numbackends:sum" + 1000 * "numbackends:n" WHERE connection_id = $1 AND entity = '{a}'`,
      [connectionId],
    );
    const moved = await answer();
    expect(moved[1]! - before[1]!).toBeGreaterThanOrEqual(799);
    // A cell without the facts: the whole answer comes from raw rows again.
    await store.db.query(
      `UPDATE metrics.pg_stat_database__entity_cells SET "numbackends:n" = NULL WHERE connection_id = $1 AND entity = '{a}' AND cell_start = date_trunc('hour', $2::timestamptz) + interval '3 hours'`,
      [connectionId, new Date(start).toISOString()],
    );
    expect(await answer()).toEqual(before);
  });

  it("judges a gauge's repeats by the database's own spacing when it misses samples, as the pipeline does", async () => {
    const connectionId = await addConnection(store.db, "entity-cells-gauge-spacing");
    const probe = findProbe("pg_stat_database")!;
    const t0 = Date.parse("2026-03-09T00:00:00Z");
    // `a` in every sample a minute apart, `half` in every other one until 21 hours in: its own spacing is two minutes.
    const rows = Array.from({ length: 24 * 60 }, (_, i) => [
      { collected_at: new Date(t0 + i * 60_000).toISOString(), database_name: "a", xact_commit: i, numbackends: i % 7 },
      ...(i % 2 === 0 && i <= 21 * 60
        ? [{ collected_at: new Date(t0 + i * 60_000).toISOString(), database_name: "half", xact_commit: i, numbackends: i % 5 }]
        : []),
    ]).flat();
    await writeShuffled(store, random(4), connectionId, "pg_stat_database", rows, 120);
    // The window ends 4 minutes after half's last sample: within three of its own spacings (its value repeats into
    // the end point), not within three of the connection's.
    const window = { start: t0 + HOUR, end: t0 + 21 * HOUR + 240_000 };
    const buckets = layoutBuckets(window.start, window.end, INTERVAL, 4);
    const raw = await fetchSampleRows(store.db, {
      probe,
      connectionIds: [connectionId],
      from: window.start - borrowLimitMs(buckets),
      to: window.end,
      columns: ["numbackends"],
      filters: { database_name: "half" },
    });
    const [expected] = computeSeries({
      probe,
      metrics: parseMetricList("numbackends", probe),
      samples: groupSamples(probe, raw),
      buckets,
      intervalSeconds: INTERVAL,
      aggregation: "avg",
    });
    expect(expected[4]).not.toBeNull();
    const answer = await runMetricsQuery(store.db, {
      probeName: "pg_stat_database",
      connectionIds: [connectionId],
      window,
      buckets: 4,
      metrics: "numbackends",
      filters: { database_name: "half" },
    });
    expect(answer.series[0].data.map((p) => p.value)).toEqual(expected);
  });

  // Six buckets from 10 past, every edge on a sample; `b` leaves for a while, so its buckets there have no value
  // and the pipeline's repeats are judged. 35 minutes: hours cut by bucket edges (the cells, less their parts read
  // raw where only sums matter); 10 minutes: ten samples a bucket (raw rows reduced per bucket in one scan).
  it.each([
    { minutes: 35, hours: 12, away: [100, 160], seed: 5, day: "2026-03-10", reads: "the cells" },
    { minutes: 10, hours: 3, away: [20, 45], seed: 6, day: "2026-03-11", reads: "raw rows alone" },
  ])(
    "reads every database's gauge per bucket in the datastore, in $minutes-minute buckets from $reads, samples on bucket edges included",
    async ({ minutes, hours, away, seed, day }) => {
      const n = 6;
      const connectionId = await addConnection(store.db, `entity-gauge-${minutes}`);
      const probe = findProbe("pg_stat_database")!;
      const t0 = Date.parse(`${day}T00:00:00Z`);
      const rows = Array.from({ length: hours * 60 }, (_, i) =>
        ["a", "b"].map((d, j) => ({
          collected_at: new Date(t0 + i * 60_000).toISOString(),
          database_name: d,
          xact_commit: i,
          numbackends: (i * (j + 3)) % 11,
        })),
      ).flat();
      const gone = (r: { collected_at: string }) =>
        Date.parse(r.collected_at) >= t0 + HOUR + away[0] * 60_000 && Date.parse(r.collected_at) <= t0 + HOUR + away[1] * 60_000;
      await writeShuffled(
        store,
        random(seed),
        connectionId,
        "pg_stat_database",
        rows.filter((r) => r.database_name === "a" || !gone(r)),
        60,
      );
      const window = { start: t0 + HOUR + 10 * 60_000, end: t0 + HOUR + (10 + n * minutes) * 60_000 };
      const buckets = layoutBuckets(window.start, window.end, INTERVAL, n);
      expect({ width: buckets.width, covered: planRollupReads(buckets, Number.NEGATIVE_INFINITY, ENTITY_CELLS_MS).covered < MIN_COVERED_SHARE }).toEqual({
        width: minutes * 60_000,
        covered: true,
      });
      // A counter's raw value (xact_commit) is a level too, reduced from raw rows alone (the cells keep no levels of counters).
      for (const [metrics, aggregation] of ["numbackends", "xact_commit"].flatMap((m) => AGGREGATIONS.map((a) => [m, a] as const))) {
        const query = { probeName: "pg_stat_database", connectionIds: [connectionId], window, buckets: n, aggregation, metrics, groupBy: "database_name" };
        const reference = (await runGroupedMetricsQuery(store.db, query, "pipeline")).map((s) => s.data.map((p) => p.value));
        expect(reference[1]).toContain(null);
        const direct = await entitySeriesFromCells(store.db, {
          probe,
          metrics: parseMetricList(metrics, probe),
          connectionIds: [connectionId],
          buckets,
          intervalSeconds: INTERVAL,
          aggregation,
          levelsFrom: Number.NEGATIVE_INFINITY,
          filters: {},
          borrowFrom: window.start - borrowLimitMs(buckets),
        });
        expect({ metrics, aggregation, series: direct?.get(connectionId)?.map((e) => e.values[0]) }).toEqual({ metrics, aggregation, series: reference });
        expect({ metrics, aggregation, series: (await runGroupedMetricsQuery(store.db, query)).map((s) => s.data.map((p) => p.value)) }).toEqual({
          metrics,
          aggregation,
          series: reference,
        });
      }
    },
  );

  // Entities come back from the datastore as JSON text (parsed once each): names that need quoting in an array's
  // text form, or escaping in JSON, keep their spelling. 2-hour buckets read whole hours from the cells (counters
  // and gauges); 10-minute ones reduce every database's gauges from raw rows.
  it.each([
    { minutes: 120, metrics: "xact_commit_per_sec,numbackends", reads: "the cells" },
    { minutes: 10, metrics: "numbackends", reads: "raw rows alone" },
  ])("keeps entity names that need quoting or escaping, reading $reads", async ({ minutes, metrics, reads }) => {
    const names = ['we"ird', "a,b", "back\\slash", "{braces}", "NULL", " spaced ", "ünï 🐘"];
    const connectionId = await addConnection(store.db, `entity-names-${minutes}`);
    const probe = findProbe("pg_stat_database")!;
    const t0 = Date.parse("2026-03-16T00:00:00Z");
    const rows = Array.from({ length: 12 * 60 }, (_, i) =>
      names.map((d, j) => ({ collected_at: new Date(t0 + i * 60_000).toISOString(), database_name: d, xact_commit: i * (j + 1), numbackends: (i + j) % 9 })),
    ).flat();
    await writeShuffled(store, random(11), connectionId, "pg_stat_database", rows, 120);
    const window = { start: t0 + HOUR, end: t0 + 11 * HOUR };
    const n = (10 * 60) / minutes;
    const query = { probeName: "pg_stat_database", connectionIds: [connectionId], window, buckets: n, metrics, groupBy: "database_name" };
    const reference = await runGroupedMetricsQuery(store.db, query, "pipeline");
    expect(new Set(reference.map((s) => s.entity.database_name))).toEqual(new Set(names));
    const buckets = layoutBuckets(window.start, window.end, INTERVAL, n);
    const direct = await entitySeriesFromCells(store.db, {
      probe,
      metrics: parseMetricList(metrics, probe),
      connectionIds: [connectionId],
      buckets,
      intervalSeconds: INTERVAL,
      aggregation: "avg",
      levelsFrom: Number.NEGATIVE_INFINITY,
      filters: {},
      borrowFrom: window.start - borrowLimitMs(buckets),
    });
    expect(
      direct
        ?.get(connectionId)
        ?.map((e) => e.entity[0])
        .sort(),
      reads,
    ).toEqual([...names].sort());
    const grouped = await runGroupedMetricsQuery(store.db, query);
    const expected = reference.map((s) => ({ entity: s.entity, name: s.name, values: s.data.map((p) => p.value) }));
    expect(
      grouped.map((s, i) => ({
        entity: s.entity,
        name: s.name,
        values: rounded(
          s.data.map((p) => p.value),
          expected[i].values,
        ),
      })),
    ).toEqual(expected);
  });

  it("borrows an entity's sample before the window when the window opens in a gap, grouped and filtered, as the pipeline does", async () => {
    const connectionId = await addConnection(store.db, "entity-cells-gap");
    const probe = findProbe("pg_stat_database")!;
    const t0 = Date.parse("2026-03-14T00:00:00Z");
    // Six hours of database a a minute apart, an hour without samples, then six hours of a and b (new).
    const minutes = [...Array.from({ length: 360 }, (_, i) => i), ...Array.from({ length: 360 }, (_, i) => 420 + i)];
    const rows = minutes.flatMap((i) =>
      (i < 360 ? ["a"] : ["a", "b"]).map((d, j) => ({
        collected_at: new Date(t0 + i * 60_000).toISOString(),
        database_name: d,
        numbackends: (i * (j + 3)) % 13,
      })),
    );
    await writeShuffled(store, random(10), connectionId, "pg_stat_database", rows, 90);
    // A minute after the last sample before the gap: the first bucket is empty, and a's last sample repeats into it.
    const window = { start: t0 + 361 * 60_000, end: t0 + 361 * 60_000 + 5 * HOUR };
    const buckets = layoutBuckets(window.start, window.end, INTERVAL, 10);
    for (const aggregation of ["avg", "max"]) {
      const expected = async (database: string) => {
        const raw = await fetchSampleRows(store.db, {
          probe,
          connectionIds: [connectionId],
          from: window.start - borrowLimitMs(buckets),
          to: window.end,
          columns: ["numbackends"],
          filters: { database_name: database },
        });
        return computeSeries({
          probe,
          metrics: parseMetricList("numbackends", probe),
          samples: groupSamples(probe, raw),
          buckets,
          intervalSeconds: INTERVAL,
          aggregation: aggregation as "avg",
        })[0];
      };
      const query = { probeName: "pg_stat_database", connectionIds: [connectionId], window, buckets: 10, aggregation, metrics: "numbackends" };
      const [a, b] = [await expected("a"), await expected("b")];
      expect(a[0], "a's last sample repeats into the first bucket").toBe((359 * 3) % 13);
      expect(b[0], "b has none to repeat").toBeNull();
      for (const database of ["a", "b"])
        expect(
          (await runMetricsQuery(store.db, { ...query, filters: { database_name: database } })).series[0].data.map((p) => p.value),
          `${database}, ${aggregation}`,
        ).toEqual(database === "a" ? a : b);
      const grouped = await runGroupedMetricsQuery(store.db, { ...query, groupBy: "database_name" });
      expect(
        grouped.map((s) => s.data.map((p) => p.value)),
        aggregation,
      ).toEqual([a, b]);
    }
  });

  it.each(["avg", "max", "min", "last"] as const)(
    "reads a gauge at cut hours from the cells' facts over 5-minute parts (aggregation=%s), and raw rows where a cell has none (written before migration 26, or 47 for extremes and latest values)",
    async (aggregation) => {
      const connectionId = await addConnection(store.db, `entity-cells-parts-${aggregation}`);
      const probe = findProbe("pg_stat_database")!;
      const t0 = Date.parse("2026-03-13T00:00:00Z");
      // a's extremes lie at the hours that bucket edges cut (every fifth, below): its highest in the first part a
      // bucket reads from the cells; its lowest, every other edge, just before the edge, in the part it cuts.
      const a = (i: number) => {
        const hour = Math.floor(i / 60);
        return hour % 5 === 1 && i % 60 === 10 ? 100 : hour % 10 === 1 && i % 60 === 6 ? 1 : 20 + ((i * 3) % 13);
      };
      const rows = Array.from({ length: 24 * 60 }, (_, i) =>
        ["a", "b"].map((d) => ({
          collected_at: new Date(t0 + i * 60_000).toISOString(),
          database_name: d,
          xact_commit: i,
          numbackends: d === "a" ? a(i) : (i * 4) % 13,
        })),
      ).flat();
      await writeShuffled(store, random(9), connectionId, "pg_stat_database", rows, 90);
      // 5-hour buckets from 7 past: every edge cuts an hour and a 5-minute part. For the latest value, from 5 past:
      // a bucket's end that cuts a part leaves the latest values to raw rows.
      const past = (aggregation === "last" ? 5 : 7) * 60_000;
      const window = { start: t0 + HOUR + past, end: t0 + 21 * HOUR + past };
      const buckets = layoutBuckets(window.start, window.end, INTERVAL, 4);
      const raw = await fetchSampleRows(store.db, {
        probe,
        connectionIds: [connectionId],
        from: window.start - borrowLimitMs(buckets),
        to: window.end,
        columns: ["numbackends"],
        filters: { database_name: "a" },
      });
      const [expected] = computeSeries({
        probe,
        metrics: parseMetricList("numbackends", probe),
        samples: groupSamples(probe, raw),
        buckets,
        intervalSeconds: INTERVAL,
        aggregation,
      });
      const query = { probeName: "pg_stat_database", connectionIds: [connectionId], window, buckets: 4, aggregation, metrics: "numbackends" };
      const statements: string[] = [];
      const watched = { query: (sql: string, params?: readonly unknown[]) => (statements.push(sql), store.db.query(sql, params)) } as never;
      const filtered = async () => (await runMetricsQuery(watched, { ...query, filters: { database_name: "a" } })).series[0].data.map((p) => p.value);
      const grouped = async () => (await runGroupedMetricsQuery(watched, { ...query, groupBy: "database_name" }))[0].data.map((p) => p.value);
      expect([await filtered(), await grouped()]).toEqual([expected, expected]);
      expect(statements.filter((sql) => sql.includes("part_from")).length, "both read the cells by parts").toBe(2);
      // Parts really are read: facts out of reach of the samples move the answers.
      const parts = (sql: string) =>
        store.db.query(`UPDATE metrics.pg_stat_database__entity_cells SET ${sql} WHERE connection_id = $1 AND entity = '{a}'`, [connectionId]);
      await parts(
        aggregation === "avg"
          ? `"numbackends:part_sum" = array_fill("numbackends:sum", ARRAY[12]), "numbackends:part_n" = array_fill("numbackends:n", ARRAY[12])`
          : `"numbackends:part_${aggregation}" = array_fill("numbackends:${aggregation}" ${aggregation === "min" ? "-" : "+"} 100, ARRAY[12])`,
      );
      expect(await filtered()).not.toEqual(expected);
      expect(await grouped()).not.toEqual(expected);
      // Cells without them: raw rows answer, as the pipeline does.
      await parts(
        aggregation === "avg"
          ? `"numbackends:part_sum" = NULL, "numbackends:part_n" = NULL, "numbackends:part_last_at" = NULL`
          : `"numbackends:part_last" = NULL, "numbackends:part_min" = NULL, "numbackends:part_max" = NULL`,
      );
      expect([await filtered(), await grouped()]).toEqual([expected, expected]);
    },
  );

  it("counts a connection's samples in a range from the recorded changes, its first sample included, beside their median spacing", async () => {
    const connectionId = await addConnection(store.db, "sample-counts");
    const empty = await addConnection(store.db, "sample-counts-empty");
    const t0 = Date.parse("2026-03-12T00:00:00Z");
    const at = (i: number) => t0 + i * 60_000;
    const rows = Array.from({ length: 10 }, (_, i) => ({ collected_at: new Date(at(i)).toISOString(), database_name: "a", xact_commit: i, numbackends: i }));
    await writeShuffled(store, random(7), connectionId, "pg_stat_database", rows, 3);
    const probe = findProbe("pg_stat_database")!;
    const counts = async (from: number, to: number) => Object.fromEntries(await sampleSpacings(store.db, probe, [connectionId, empty], from, to));
    expect(await counts(at(0), at(9))).toEqual({ [connectionId]: { samples: 10, median: 60_000 } });
    expect(await counts(at(0) - HOUR, at(1))).toEqual({ [connectionId]: { samples: 2, median: 60_000 } });
    expect(await counts(at(3), at(6))).toEqual({ [connectionId]: { samples: 4, median: 60_000 } });
    expect(await counts(at(3), at(3))).toEqual({ [connectionId]: { samples: 1, median: null } });
    expect(await counts(at(3) + 1, at(4) - 1)).toEqual({});
  });

  it("bounds a connection's spacing from the change cells of whole hours and the changes of the rest, counting its samples as sampleSpacings does and its intervals longer than the collection interval", async () => {
    const connectionId = await addConnection(store.db, "sample-bounds");
    const t0 = Date.parse("2026-03-14T00:00:00Z");
    // Five hours a minute apart from 00:30, but for a 7-minute gap in the third hour (before 02:50) and a 3-minute one
    // in the last (before 05:10).
    const times: number[] = [];
    for (let t = t0 + 30 * 60_000; t <= t0 + 5 * HOUR + 25 * 60_000; t += 60_000)
      if (!(t > t0 + 2 * HOUR + 43 * 60_000 && t < t0 + 2 * HOUR + 50 * 60_000) && !(t > t0 + 5 * HOUR + 7 * 60_000 && t < t0 + 5 * HOUR + 10 * 60_000))
        times.push(t);
    await writeShuffled(
      store,
      random(8),
      connectionId,
      "pg_stat_database",
      times.map((t, i) => ({ collected_at: new Date(t).toISOString(), database_name: "a", xact_commit: i, numbackends: i })),
      25,
    );
    const probe = findProbe("pg_stat_database")!;
    const bounds = async (from: number, to: number, cellsFrom = Number.NEGATIVE_INFINITY) =>
      (await sampleBounds(store.db, probe, [connectionId], { from, to, cellsFrom, intervalMs: 60_000 })).get(connectionId);
    const spansEndingIn = (from: number, to: number) => times.slice(1).flatMap((t, i) => (t >= from && t <= to ? [t - times[i]] : []));
    for (const [from, to] of [
      [t0, t0 + 6 * HOUR], // every sample, the first included
      [t0 + HOUR + 1, t0 + 4 * HOUR - 1], // whole hours 02:00-03:00 and raw edges
      [t0 + 3 * HOUR, t0 + 5 * HOUR + 12 * 60_000], // the later gap in a raw edge
      [t0 + 2 * HOUR + 20 * 60_000, t0 + 2 * HOUR + 40 * 60_000], // no whole hour
    ]) {
      const spacings = (await sampleSpacings(store.db, probe, [connectionId], from, to)).get(connectionId)!;
      for (const cellsFrom of [Number.NEGATIVE_INFINITY, t0 + 3 * HOUR]) {
        const spans = spansEndingIn(from, to);
        const want = { samples: spacings.samples, intervals: spans.length, longest: Math.max(...spans), longer: spans.filter((span) => span > 60_000).length };
        expect({ from, cellsFrom, ...(await bounds(from, to, cellsFrom)) }).toEqual({ from, cellsFrom, ...want });
      }
    }
    expect(await bounds(t0 + 6 * HOUR, t0 + 7 * HOUR)).toBeUndefined();
  });

  it("lists an entity seen only in the span borrowed before the window, as the pipeline does", async () => {
    const connectionId = await addConnection(store.db, "entity-cells-borrowed");
    const minute = 60_000;
    const t0 = Date.parse("2026-03-02T00:00:00Z");
    const start = t0 + 4 * HOUR;
    // Unequal spacing, so that reading by difference cannot answer the rates and the cells do.
    const rows = Array.from({ length: 20 * 60 }, (_, i) => t0 + i * minute + (i % 3) * 1000).flatMap((t, i) => [
      { collected_at: new Date(t).toISOString(), database_name: "a", xact_commit: i * 10 },
      ...(t >= start - 30 * minute && t < start ? [{ collected_at: new Date(t).toISOString(), database_name: "z", xact_commit: i }] : []),
    ]);
    await writeShuffled(store, random(3), connectionId, "pg_stat_database", rows, 60);
    const query = {
      probeName: "pg_stat_database",
      connectionIds: [connectionId],
      window: { start, end: start + 12 * HOUR },
      buckets: 4,
      metrics: "xact_commit_per_sec",
      groupBy: "database_name",
    };
    const answer = await runGroupedMetricsQuery(store.db, query);
    const reference = await runGroupedMetricsQuery(store.db, query, "pipeline");
    expect(answer.map((s) => s.entity.database_name)).toEqual(["a", "z"]);
    const expected = reference.map((s) => s.data.map((p) => p.value));
    expect(
      answer.map((s, i) =>
        rounded(
          s.data.map((p) => p.value),
          expected[i] ?? [],
        ),
      ),
    ).toEqual(expected);
    // The cells answered (the window is whole hours in wide buckets): corrupting them moves a's series.
    await store.db.query(`UPDATE metrics.pg_stat_database__entity_cells SET "xact_commit:ratio_sum" = 0 WHERE connection_id = $1`, [connectionId]);
    expect((await runGroupedMetricsQuery(store.db, query))[0].data).not.toEqual(answer[0].data);
  });
});
