import { describe, expect, it } from "vitest";
import { parseMetricList, parseMetricName } from "../../src/metrics/metric-names.ts";
import { findProbe, metricColumns } from "../../src/probes/index.ts";

const db = findProbe("pg_stat_database")!;
const statements = findProbe("pg_stat_statements")!;

describe("metric names", () => {
  it("accepts raw columns and each derived form where its kind allows", () => {
    expect(parseMetricName("xact_commit_per_sec", db)).toMatchObject({ metric: "xact_commit", form: "per_sec", unit: "/s" });
    expect(parseMetricName("sessions", db)).toMatchObject({ metric: "sessions", form: "raw" }); // a column that looks like a suffix
    expect(parseMetricName("sessions_per_sec", db)).toMatchObject({ metric: "sessions", form: "per_sec" });
    expect(parseMetricName("idle_in_transaction_time_sessions", db)).toMatchObject({ metric: "idle_in_transaction_time", form: "sessions" });
    expect(parseMetricName("dead_tuple_ratio", findProbe("pg_stat_all_tables")!)).toMatchObject({ form: "dead_tuple_ratio", unit: "%" });
  });

  it("refuses _per_sec on a gauge, a watermark or a ratio, naming metric, probe, base column and kind", () => {
    expect(() => parseMetricName("numbackends_per_sec", db)).toThrow(
      "metric `numbackends_per_sec` not supported for probe `pg_stat_database`: `numbackends` is a gauge, not a cumulative counter",
    );
    expect(() => parseMetricName("max_exec_time_per_sec", statements)).toThrow("`max_exec_time` is a lifetime watermark, not a cumulative counter");
    expect(() => parseMetricName("mean_exec_time_per_sec", statements)).toThrow(
      "metric `mean_exec_time_per_sec` not supported for probe `pg_stat_statements`: `mean_exec_time` is a lifetime watermark, not a cumulative counter",
    );
  });

  it("points _per_sec on a time counter to _pct, and on session time to _sessions", () => {
    expect(() => parseMetricName("blk_read_time_per_sec", db)).toThrow(
      /`blk_read_time` is a cumulative time counter \(milliseconds\), not a cumulative counter; use `blk_read_time_pct`/,
    );
    expect(() => parseMetricName("active_time_per_sec", db)).toThrow(/use `active_time_sessions`/);
  });

  it("refuses a form whose base is missing or of the wrong kind, naming metric and probe", () => {
    expect(() => parseMetricName("foo_per_sec", db)).toThrow("metric `foo_per_sec` not supported for probe `pg_stat_database`: the probe has no column `foo`");
    expect(() => parseMetricName("xact_commit_pct", db)).toThrow(
      /metric `xact_commit_pct` not supported for probe `pg_stat_database`: `_pct` needs a cumulative time counter/,
    );
    expect(() => parseMetricName("session_time_pct", db)).toThrow(/`_pct` needs a cumulative time counter, but `session_time` is a session time counter/);
    expect(() => parseMetricName("blk_read_time_sessions", db)).toThrow(/`_sessions` needs a session time column/);
    expect(() => parseMetricName("numbackends_delta", db)).toThrow(/`numbackends` is a gauge/);
    expect(() => parseMetricName("dead_tuple_ratio", db)).toThrow(/metric `dead_tuple_ratio` not supported for probe `pg_stat_database`/);
    expect(() => parseMetricName("datname", db)).toThrow(/`datname` is a dimension/);
    expect(() => parseMetricName("bogus", db)).toThrow("metric `bogus` not found in probe `pg_stat_database`");
  });

  it("defaults to every metric column, in table order", () => {
    expect(parseMetricList(" ", db).map((m) => m.name)).toEqual(metricColumns(db).map((c) => c.name));
    expect(parseMetricList("xact_commit, blk_read_time_pct", db).map((m) => m.name)).toEqual(["xact_commit", "blk_read_time_pct"]);
  });
});
