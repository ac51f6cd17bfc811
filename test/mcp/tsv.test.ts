import { expect, it } from "vitest";
import { toTsv } from "../../src/mcp/tsv.ts";

it("renders a header and one line per row, NULL as empty, control characters escaped", () => {
  const text = toTsv(
    ["a", "b", "c", "d"],
    [
      ["tab\there", "line\nbreak\r", null, 1.5],
      [true, new Date("2026-01-01T00:00:00Z"), undefined, "back\\slash"],
      [{ k: [1] }, 0, "", -2],
    ],
  );
  expect(text).toBe(["a\tb\tc\td", "tab\\there\tline\\nbreak\\r\t\t1.5", "true\t2026-01-01T00:00:00.000Z\t\tback\\\\slash", '{"k":[1]}\t0\t\t-2'].join("\n"));
});
