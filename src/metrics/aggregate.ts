/** Reduces the values that fall in one bucket. */
export const AGGREGATIONS = ["avg", "sum", "min", "max", "last"] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/** `values` are in time order; null when there is nothing to aggregate. */
export function aggregate(values: readonly number[], how: Aggregation): number | null {
  if (values.length === 0) return null;
  switch (how) {
    case "avg":
      return values.reduce((a, b) => a + b, 0) / values.length;
    case "sum":
      return values.reduce((a, b) => a + b, 0);
    case "min":
      return values.reduce((a, b) => (b < a ? b : a));
    case "max":
      return values.reduce((a, b) => (b > a ? b : a));
    case "last":
      return values[values.length - 1];
  }
}
