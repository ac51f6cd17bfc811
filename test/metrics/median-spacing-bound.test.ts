/**
 * medianSpacingAtMost: the bound of the judged interval a level series is read by when its samples are only
 * counted (samples/series-from-level-cells.ts). It must hold for every set of sample times in the window, and it is tight.
 */
import { describe, expect, it } from "vitest";
import { medianSpacingAtMost } from "../../src/samples/series-from-level-cells.ts";
import { median } from "../../src/metrics/samples.ts";
import { seededRandom } from "../support/seeded-random.ts";

const W = { start: 0, end: 86_400_000 };
const spacings = (times: number[]) => times.slice(1).map((t, i) => t - times[i]);

describe("medianSpacingAtMost", () => {
  it("bounds the median spacing of any samples in the window", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = seededRandom(seed);
      const n = 2 + Math.floor(random() * 300);
      // Uniform, clustered near the window's ends, or even with a few long gaps.
      const kind = seed % 3;
      const times = Array.from({ length: n }, (_, i) =>
        kind === 0
          ? random() * W.end
          : kind === 1
            ? random() < 0.5
              ? random() * 60_000
              : W.end - random() * 60_000
            : (i * W.end) / n + (random() < 0.05 ? random() * 3_600_000 : 0),
      )
        .map(Math.round)
        .sort((a, b) => a - b);
      const distinct = [...new Set(times)].filter((t) => t <= W.end);
      expect(median(spacings(distinct)) ?? 0, `seed ${seed}`).toBeLessThanOrEqual(medianSpacingAtMost(W, distinct.length) ?? Number.POSITIVE_INFINITY);
    }
  });

  it("is reached where just over half the spacings share the window (an odd count of spacings)", () => {
    for (const n of [2, 4, 6, 10, 1440]) {
      // floor((n - 1) / 2) spacings of 1 ms, the rest equal, the samples spanning the whole window.
      const short = Math.floor((n - 1) / 2);
      const long = n - 1 - short;
      const step = (W.end - short) / long;
      const times = [0];
      for (let i = 0; i < short; i++) times.push(times.at(-1)! + 1);
      for (let i = 0; i < long; i++) times.push(times.at(-1)! + step);
      const bound = medianSpacingAtMost(W, n)!;
      expect(median(spacings(times))).toBeLessThanOrEqual(bound);
      expect(median(spacings(times))! / bound).toBeGreaterThan(0.99);
    }
  });

  it("tells nothing of a single sample", () => {
    expect(medianSpacingAtMost(W, 1)).toBeUndefined();
    expect(medianSpacingAtMost(W, 0)).toBeUndefined();
  });
});
