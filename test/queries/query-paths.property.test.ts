/**
 * Property: for random histories (entities appearing and vanishing, resets with and without markers, nulls,
 * gaps, irregular spacing) written in random batches and random order, the query paths that read the sample
 * writer's recorded changes or let the datastore reduce each sample give exactly the pure pipeline's answer
 * on the raw rows, for every aggregation, with and without filters (a filtered entity's rates read by difference,
 * summed in another order, up to floating-point rounding: 1e-9 relative).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchSampleRows } from "../../src/samples/read-raw-rows.ts";
import { AGGREGATIONS } from "../../src/metrics/aggregate.ts";
import { layoutBuckets } from "../../src/metrics/buckets.ts";
import { parseMetricList } from "../../src/metrics/metric-names.ts";
import { resolveFilters } from "../../src/metrics/metrics-plan.ts";
import { runMetricsQuery } from "../../src/queries/query.ts";
import { groupSamples } from "../../src/metrics/samples.ts";
import { borrowLimitMs, computeSeries } from "../../src/metrics/series.ts";
import { findProbe } from "../../src/probes/index.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { type Case, T0, history, random, writeShuffled } from "../support/random-history.ts";

const CASES: Case[] = [
  {
    probe: "pg_stat_database",
    key: "database_name",
    entities: ["a", "b", "c"],
    columns: { xact_commit: "int", blk_read_time: "quarter", active_time: "quarter", numbackends: "int" },
    marker: "stats_reset",
    metrics: [
      "xact_commit_per_sec",
      "xact_commit_delta",
      "blk_read_time_pct",
      "blk_read_time_delta",
      "active_time_sessions",
      "numbackends",
      "xact_commit",
      "blk_read_time",
    ],
    filter: { database_name: "b" },
  },
  {
    probe: "pg_sys_network_info",
    key: "interface_name",
    entities: ["eth0", "eth1", "lo"],
    columns: { rx_bytes: "int" },
    metrics: ["rx_bytes_per_sec", "rx_bytes_delta", "rx_bytes"],
  },
  {
    probe: "pg_stat_all_tables",
    key: "relname",
    entities: ["orders", "users", "events"],
    columns: { n_live_tup: "int", n_dead_tup: "int", seq_scan: "int" },
    metrics: ["dead_tuple_ratio", "n_dead_tup", "seq_scan_per_sec"],
    fixed: { database_name: "app", schemaname: "public" },
    filter: { table_name: "users" },
  },
];

/** Numbers within 1e-9 (relative) of the reference count as equal; nothing else does. */
const rounded = (actual: Array<Array<number | null>>, expected: Array<Array<number | null>>) =>
  actual.map((values, i) =>
    values.map((v, k) =>
      typeof v === "number" && typeof expected[i]?.[k] === "number" && Math.abs(v - expected[i][k]!) <= 1e-9 * Math.max(1, Math.abs(v)) ? expected[i][k] : v,
    ),
  );

describe("the datastore-assisted query paths give the pipeline's answers", () => {
  let store: TestDatastore;
  beforeAll(async () => {
    store = await migratedDatastore("pg");
    await store.db.query("UPDATE probe_configs SET collection_interval_seconds = 60");
  });
  afterAll(() => store.close());

  it.each(Array.from({ length: 30 }, (_, i) => 1000 + i))("on random history, seed %i", async (seed) => {
    const rng = random(seed);
    const spec = CASES[seed % CASES.length];
    const probe = findProbe(spec.probe)!;
    const connectionId = await addConnection(store.db, `seed-${seed}`);
    const rows = history(rng, spec);
    await writeShuffled(store, rng, connectionId, spec.probe, rows);
    const last = Math.max(...rows.map((r) => Date.parse(r.collected_at as string)));

    for (let q = 0; q < 16; q++) {
      const start = T0 - rng.int(0, 3600) * 1000 + rng.int(0, Math.max(1, (last - T0) / 1000)) * 1000;
      const end = Math.min(start + rng.int(60, 6 * 3600) * 1000, Date.now());
      const requestedBuckets = rng.pick([1, 3, 7, 20, 150, 500]);
      const aggregation = rng.pick(AGGREGATIONS);
      const metrics = spec.metrics.join(",");
      const filters = spec.filter && rng.next() < 0.3 ? spec.filter : {};
      const fast = await runMetricsQuery(store.db, {
        probeName: spec.probe,
        connectionIds: [connectionId],
        window: { start, end },
        buckets: requestedBuckets,
        aggregation,
        metrics,
        filters,
      });

      const buckets = layoutBuckets(start, end, 60, requestedBuckets);
      const stored = resolveFilters(probe, filters);
      const raw = await fetchSampleRows(store.db, {
        probe,
        connectionIds: [connectionId],
        from: start - borrowLimitMs(buckets),
        to: end,
        columns: [...Object.keys(spec.columns), ...(spec.marker ? [spec.marker] : [])],
        filters: stored,
      });
      const reference = computeSeries({
        probe,
        metrics: parseMetricList(metrics, probe),
        samples: groupSamples(probe, raw),
        buckets,
        intervalSeconds: 60,
        aggregation,
      });
      const context = { seed, query: q, start: new Date(start).toISOString(), end: new Date(end).toISOString(), requestedBuckets, aggregation, filters };
      expect({
        ...context,
        series: rounded(
          fast.series.map((s) => s.data.map((p) => p.value)),
          reference,
        ),
      }).toEqual({ ...context, series: reference });
    }
  });
});
