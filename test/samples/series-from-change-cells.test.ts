/** bucketValue, pure: a bucket's counter metric from its merged facts, as the pipeline defines it. */
import { describe, expect, it } from "vitest";
import { bucketValue } from "../../src/samples/series-from-change-cells.ts";

const bucket = (intervals: number, column: { n: number; sum: number | null; ratioSum?: number; ratioMin?: number; ratioMax?: number; ratioLast?: number }) => ({
  k: 0,
  intervals,
  maxSpanMs: 60_000,
  gaps: 0,
  columns: [{ ratioSum: Number.NaN, ratioMin: Number.NaN, ratioMax: Number.NaN, ratioLast: Number.NaN, ...column }],
});

describe("bucketValue", () => {
  it("is null without intervals; _delta is 0 when intervals ended in the bucket but none had a valid change, the rates null", () => {
    expect(bucketValue("delta", "avg", undefined, 0)).toBeNull();
    expect(bucketValue("delta", "avg", bucket(0, { n: 0, sum: null }), 0)).toBeNull();
    expect(bucketValue("delta", "avg", bucket(2, { n: 0, sum: null }), 0)).toBe(0);
    expect(bucketValue("per_sec", "avg", bucket(2, { n: 0, sum: null }), 0)).toBeNull();
  });

  it("scales change per millisecond to each form and aggregates like the pipeline", () => {
    // Two intervals of 60 s with changes 60 and 180: ratios 0.001 and 0.003 per ms.
    const b = bucket(2, { n: 2, sum: 240, ratioSum: 0.004, ratioMin: 0.001, ratioMax: 0.003, ratioLast: 0.001 });
    expect(bucketValue("delta", "max", b, 0)).toBe(240);
    expect(bucketValue("per_sec", "avg", b, 0)).toBeCloseTo(2, 12);
    expect(bucketValue("per_sec", "sum", b, 0)).toBeCloseTo(4, 12);
    expect(bucketValue("per_sec", "min", b, 0)).toBeCloseTo(1, 12);
    expect(bucketValue("per_sec", "max", b, 0)).toBeCloseTo(3, 12);
    expect(bucketValue("per_sec", "last", b, 0)).toBeCloseTo(1, 12);
    expect(bucketValue("pct", "avg", b, 0)).toBeCloseTo(0.2, 12);
    expect(bucketValue("sessions", "avg", b, 0)).toBeCloseTo(0.002, 12);
  });
});
