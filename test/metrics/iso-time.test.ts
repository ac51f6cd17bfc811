import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/metrics/iso-time.ts";

describe("isoTime", () => {
  it("spells every time as toISOString does: fractions of a millisecond, day edges, before 1970, far years", () => {
    const times = [
      0,
      -1,
      -0.5,
      1.999,
      86_399_999.9,
      86_400_000,
      Date.UTC(2026, 10, 27, 23, 59, 59, 999),
      Date.UTC(2028, 1, 29, 12),
      8.64e15,
      -8.64e15,
      253_402_300_800_000,
    ];
    // Random times, and runs of consecutive times that share a day (as a series' points do), in both directions.
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    for (let i = 0; i < 20_000; i++) times.push((random() - 0.3) * 4e12, Date.UTC(2026, 0, 1) + i * 576_000.4, Date.UTC(2026, 0, 1) - i * 61_234.7);
    for (const t of times) expect(isoTime(t), String(t)).toBe(new Date(t).toISOString());
  });
});
