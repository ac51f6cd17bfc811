import { describe, expect, it } from "vitest";
import { layoutBuckets } from "../../src/metrics/buckets.ts";
import { parseMetricList } from "../../src/metrics/metric-names.ts";
import { groupSamples, type Row } from "../../src/metrics/samples.ts";
import { computeSeries } from "../../src/metrics/series.ts";
import type { Aggregation } from "../../src/metrics/aggregate.ts";
import { findProbe } from "../../src/probes/index.ts";

const T0 = Date.UTC(2026, 0, 1);
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const N = null;

/** Rows of one sample at `seconds` after T0. */
const sample = (seconds: number, ...rows: Row[]) => rows.map((r) => ({ collected_at: at(seconds), ...r }));

function run(
  probeName: string,
  metrics: string,
  rows: Row[],
  opts: { windowSeconds?: number; interval?: number; buckets?: number; aggregation?: Aggregation; startOffset?: number } = {},
) {
  const probe = findProbe(probeName)!;
  const start = T0 + (opts.startOffset ?? 0) * 1000;
  const b = layoutBuckets(start, start + (opts.windowSeconds ?? 600) * 1000, opts.interval ?? 60, opts.buckets);
  const series = computeSeries({
    probe,
    metrics: parseMetricList(metrics, probe),
    samples: groupSamples(probe, rows),
    buckets: b,
    intervalSeconds: opts.interval ?? 60,
    aggregation: opts.aggregation ?? "avg",
  });
  return { b, series };
}

// Window [T0, T0+600 s], interval 60 s: 10 buckets of 60 s, 11 points; samples sit mid-bucket at 30 + 60j s.
const mid = (j: number) => 30 + 60 * j;
const dbRow = (database_name: string, values: Row) => ({ database_name, ...values });

describe("bucket layout", () => {
  it("gives 12 buckets and 13 points for 1 hour at 300 s", () => {
    const { b, series } = run("pg_stat_database", "numbackends", [], { windowSeconds: 3600, interval: 300 });
    expect(b.n).toBe(12);
    expect(b.width).toBe(300_000);
    expect(series[0]).toHaveLength(13);
  });

  it("never makes buckets narrower than the interval, and clamps the count to 1..500", () => {
    expect(layoutBuckets(0, 3_600_000, 60, 150).n).toBe(60);
    expect(layoutBuckets(0, 30 * 86_400_000, 1, 1000).n).toBe(500);
    expect(layoutBuckets(0, 3_600_000, 60, 0).n).toBe(1);
    expect(layoutBuckets(0, 30_000, 60, 150)).toMatchObject({ n: 1, width: 30_000 });
  });

  it("gives a connection without samples a full-length series of nulls", () => {
    const { series } = run(
      "pg_stat_database",
      "numbackends,xact_commit_per_sec,xact_commit_delta,blk_read_time_pct,dead_tuple_ratio".replace(",dead_tuple_ratio", ""),
      [],
    );
    for (const s of series) expect(s).toEqual(new Array(11).fill(null));
  });
});

describe("per-entity differencing", () => {
  it("sums each entity's change: five databases at 50 % each give 250 %", () => {
    const dbs = ["a", "b", "c", "d", "e"];
    const rows = [0, 1, 2].flatMap((j) => sample(mid(j), ...dbs.map((d, i) => dbRow(d, { blk_read_time: 1000 * i + 30_000 * j }))));
    const { series } = run("pg_stat_database", "blk_read_time_pct,blk_read_time_delta", rows);
    expect(series[0]).toEqual([N, 250, 250, N, N, N, N, N, N, N, N]);
    expect(series[1]).toEqual([N, 150_000, 150_000, N, N, N, N, N, N, N, N]);
  });

  it("ignores the existing total of an interface that appears mid-window", () => {
    const eth0 = (v: number) => ({ interface_name: "eth0", rx_bytes: v });
    const rows = [
      ...sample(mid(0), eth0(1000)),
      ...sample(mid(1), eth0(1600)),
      ...sample(mid(2), eth0(2200), { interface_name: "eth1", rx_bytes: 1e9 }),
      ...sample(mid(3), eth0(2800), { interface_name: "eth1", rx_bytes: 1e9 + 60 }),
    ];
    const { series } = run("pg_sys_network_info", "rx_bytes_per_sec", rows);
    expect(series[0].slice(0, 5)).toEqual([N, 10, 10, 11, N]);
  });

  it("produces no negative change for an entity that disappears", () => {
    const rows = [...sample(mid(0), dbRow("a", { xact_commit: 100 }), dbRow("b", { xact_commit: 9000 })), ...sample(mid(1), dbRow("a", { xact_commit: 160 }))];
    expect(run("pg_stat_database", "xact_commit_per_sec", rows).series[0].slice(0, 3)).toEqual([N, 1, N]);
  });

  it("leaves out lo and lo0 from raw and derived metrics of pg_sys_network_info", () => {
    const rows = [0, 1].flatMap((j) =>
      sample(
        mid(j),
        { interface_name: "eth0", rx_bytes: 600 * j },
        { interface_name: "lo", rx_bytes: 60_000 * j },
        { interface_name: "lo0", rx_bytes: 6e6 * j },
      ),
    );
    const { series } = run("pg_sys_network_info", "rx_bytes,rx_bytes_per_sec", rows);
    expect(series[0].slice(0, 2)).toEqual([0, 600]);
    expect(series[1].slice(0, 2)).toEqual([N, 10]);
  });
});

describe("statistics resets", () => {
  it("treats a changed marker as a reset even when the counter rose past its old value", () => {
    const m1 = "2025-12-01T00:00:00Z";
    const m2 = "2026-01-01T00:02:00Z";
    const rows = [
      ...sample(mid(0), dbRow("a", { xact_commit: 100, stats_reset: m1 })),
      ...sample(mid(1), dbRow("a", { xact_commit: 160, stats_reset: m1 })),
      ...sample(mid(2), dbRow("a", { xact_commit: 5000, stats_reset: m2 })),
      ...sample(mid(3), dbRow("a", { xact_commit: 5060, stats_reset: m2 })),
    ];
    const { series } = run("pg_stat_database", "xact_commit_per_sec,xact_commit_delta", rows);
    expect(series[0].slice(0, 5)).toEqual([N, 1, N, 1, N]);
    expect(series[1].slice(0, 5)).toEqual([N, 60, 0, 60, N]);
  });

  it("uses the archiver's own marker for archived_count on pg_stat_wal", () => {
    const rows = [
      ...sample(mid(0), { archived_count: 10, wal_records: 100, stats_reset: "2025-01-01Z", archiver_stats_reset: "2025-01-01Z" }),
      ...sample(mid(1), { archived_count: 40, wal_records: 160, stats_reset: "2025-01-01Z", archiver_stats_reset: "2026-01-01T00:01:00Z" }),
    ];
    const { series } = run("pg_stat_wal", "archived_count_per_sec,wal_records_per_sec", rows);
    expect(series[0][1]).toBeNull();
    expect(series[1][1]).toBe(1);
  });

  it("discards a negative change on a probe without markers", () => {
    const rows = [
      ...sample(mid(0), { interface_name: "eth0", tx_bytes: 6000 }, { interface_name: "eth1", tx_bytes: 100 }),
      ...sample(mid(1), { interface_name: "eth0", tx_bytes: 60 }, { interface_name: "eth1", tx_bytes: 160 }),
      ...sample(mid(2), { interface_name: "eth0", tx_bytes: 0 }, { interface_name: "eth1", tx_bytes: 100 }),
    ];
    const { series } = run("pg_sys_network_info", "tx_bytes_per_sec,tx_bytes_delta", rows);
    expect(series[0].slice(0, 4)).toEqual([N, 1, N, N]); // second interval: both entities negative
    expect(series[1].slice(0, 4)).toEqual([N, 60, 0, N]);
  });
});

describe("collection gaps", () => {
  const commits = (js: number[]) => js.flatMap((j) => sample(mid(j), dbRow("a", { xact_commit: 60 * j })));

  it("reports null for every derived form across a gap longer than 3 intervals", () => {
    const { series } = run("pg_stat_database", "xact_commit_per_sec,xact_commit_delta", commits([0, 1, 6, 7, 8]));
    expect(series[0]).toEqual([N, 1, N, N, N, N, N, 1, 1, N, N]);
    expect(series[1]).toEqual([N, 60, N, N, N, N, N, 60, 60, N, N]);
  });

  it("gives _delta 0 to a bucket spanned by an accepted interval", () => {
    const { series } = run("pg_stat_database", "xact_commit_per_sec,xact_commit_delta", commits([0, 1, 3]));
    expect(series[0].slice(0, 5)).toEqual([N, 1, N, 1, N]);
    expect(series[1].slice(0, 5)).toEqual([N, 60, 0, 120, N]);
  });

  it("does not read history collected at a wider interval as gaps", () => {
    // Configured interval 60 s, but these samples were collected every 300 s.
    const rows = [0, 1, 2, 3].flatMap((j) => sample(30 + 300 * j, dbRow("a", { xact_commit: 300 * j })));
    const { series } = run("pg_stat_database", "xact_commit_per_sec,xact_commit_delta", rows, { windowSeconds: 1200, buckets: 4 });
    // 4 buckets of 300 s; each interval of 300 s ends in the next bucket.
    expect(series[0]).toEqual([N, 1, 1, 1, N]);
    expect(series[1]).toEqual([N, 300, 300, 300, N]);
  });

  it("borrows the latest sample before the window, and applies the gap rule to it", () => {
    const borrowed = [...sample(-30, dbRow("a", { xact_commit: 0 })), ...sample(30, dbRow("a", { xact_commit: 60 }))];
    expect(run("pg_stat_database", "xact_commit_per_sec", borrowed).series[0][0]).toBe(1);
    const tooOld = [...sample(-31 * 60, dbRow("a", { xact_commit: 0 })), ...sample(30, dbRow("a", { xact_commit: 60 }))];
    expect(run("pg_stat_database", "xact_commit_per_sec", tooOld).series[0][0]).toBeNull();
    const inGap = [...sample(-20 * 60, dbRow("a", { xact_commit: 0 })), ...sample(30, dbRow("a", { xact_commit: 60 }))];
    expect(run("pg_stat_database", "xact_commit_delta", inGap).series[0][0]).toBeNull();
  });
});

describe("rates and aggregation", () => {
  it("aggregates the intervals ending in a bucket with avg, sum, min, max or last; never for _delta", () => {
    // 5 buckets of 120 s; intervals ending in bucket 1 have rates 1 and 3.
    const rows = [
      ...sample(30, dbRow("a", { xact_commit: 0 })),
      ...sample(150, dbRow("a", { xact_commit: 120 })),
      ...sample(210, dbRow("a", { xact_commit: 300 })),
    ];
    const value = (aggregation: Aggregation, metric = "xact_commit_per_sec") => run("pg_stat_database", metric, rows, { buckets: 5, aggregation }).series[0][1];
    expect([value("avg"), value("sum"), value("min"), value("max"), value("last")]).toEqual([2, 4, 1, 3, 3]);
    expect(value("max", "xact_commit_delta")).toBe(300);
    expect(value("min", "xact_commit_delta")).toBe(300);
  });

  it("computes _sessions as the average number of sessions in a state", () => {
    const rows = [0, 1].flatMap((j) => sample(mid(j), dbRow("a", { active_time: 30_000 * j }), dbRow("b", { active_time: 60_000 * j })));
    expect(run("pg_stat_database", "active_time_sessions", rows).series[0].slice(0, 2)).toEqual([N, 1.5]);
  });

  it("carries units for each form", () => {
    const probe = findProbe("pg_stat_database")!;
    const units = parseMetricList(
      "numbackends,xact_commit_per_sec,xact_commit_delta,blk_read_time_delta,session_time_delta,blk_read_time_pct,active_time_sessions",
      probe,
    ).map((m) => m.unit);
    expect(units).toEqual(["", "/s", "", "ms", "ms", "%", "sessions"]);
  });
});

describe("raw columns and dead_tuple_ratio", () => {
  it("repeats the last observed value for at most 3 intervals", () => {
    const { series } = run("pg_stat_database", "numbackends", sample(mid(0), dbRow("a", { numbackends: 5 }), dbRow("b", { numbackends: 7 })));
    expect(series[0]).toEqual([6, 6, 6, 6, N, N, N, N, N, N, N]);
  });

  it("aggregates every row of the bucket", () => {
    const rows = [
      ...sample(30, dbRow("a", { numbackends: 1 }), dbRow("b", { numbackends: 3 })),
      ...sample(90, dbRow("a", { numbackends: 2 }), dbRow("b", { numbackends: 4 })),
    ];
    const value = (aggregation: Aggregation) => run("pg_stat_database", "numbackends", rows, { buckets: 5, aggregation }).series[0][0];
    expect([value("avg"), value("sum"), value("min"), value("max"), value("last")]).toEqual([2.5, 10, 1, 4, 4]);
  });

  it("computes dead_tuple_ratio per sample over the selected rows, then repeats like a raw column", () => {
    const table = (relname: string, live: number, dead: number) => ({
      database_name: "app",
      schemaname: "public",
      relname,
      n_live_tup: live,
      n_dead_tup: dead,
    });
    const rows = [...sample(mid(0), table("t1", 90, 10), table("t2", 0, 0)), ...sample(mid(1), table("t1", 50, 50), table("t2", 100, 0))];
    const { series } = run("pg_stat_all_tables", "dead_tuple_ratio", rows);
    expect(series[0].slice(0, 6)).toEqual([10, 25, 25, 25, 25, N]);
  });
});
