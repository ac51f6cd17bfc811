/** The exposition text as a scraper parses it: escaping, counters' names in both formats, timestamps, special values. */
import { describe, expect, it } from "vitest";
import { type Family, documentEnd, metricName, negotiate, renderFamily } from "../../src/metrics/exposition.ts";

const family: Family = {
  name: "pg_x_calls",
  type: "counter",
  help: 'Calls "made"\\ by\nusers',
  samples: [
    { labels: { query: 'SELECT "a"\\\nFROM t' }, value: 5, timestampMs: 1_700_000_000_123 },
    { labels: {}, value: Number.NaN },
  ],
};

describe("exposition", () => {
  it("writes the Prometheus text format: the counter's family named with _total, ms timestamps, escaped labels and help", () => {
    expect(renderFamily(family, "prometheus")).toBe(
      [
        '# HELP pg_x_calls_total Calls "made"\\\\ by\\nusers',
        "# TYPE pg_x_calls_total counter",
        'pg_x_calls_total{query="SELECT \\"a\\"\\\\\\nFROM t"} 5 1700000000123',
        "pg_x_calls_total NaN",
        "",
      ].join("\n"),
    );
  });

  it("writes OpenMetrics: the family without _total, seconds, quotes escaped in help too, and # EOF", () => {
    const text = renderFamily(family, "openmetrics");
    expect(text.split("\n").slice(0, 3)).toEqual([
      '# HELP pg_x_calls Calls \\"made\\"\\\\ by\\nusers',
      "# TYPE pg_x_calls counter",
      'pg_x_calls_total{query="SELECT \\"a\\"\\\\\\nFROM t"} 5 1700000000.123',
    ]);
    expect(documentEnd("openmetrics")).toBe("# EOF\n");
    expect(documentEnd("prometheus")).toBe("");
  });

  it("leaves out a family without samples, cleans names, and negotiates the format", () => {
    expect(renderFamily({ ...family, samples: [] }, "prometheus")).toBe("");
    expect(metricName("pg_stat-io.reads")).toBe("pg_stat_io_reads");
    expect(metricName("1st")).toBe("_1st");
    expect(negotiate("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")).toBe("openmetrics");
    expect(negotiate("text/plain")).toBe("prometheus");
    expect(negotiate(undefined)).toBe("prometheus");
  });
});
