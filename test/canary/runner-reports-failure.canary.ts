// A deliberately failing test, run by .ci/run before the suite (never part of it): if Vitest exits 0 here,
// the test runner does not report failures and CI would pass anything.
import { expect, it } from "vitest";

it("fails on purpose", () => {
  expect(1 + 1).toBe(3);
});
