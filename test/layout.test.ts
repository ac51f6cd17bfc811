/**
 * The shape of src/ holds (scripts/import-graph.ts, `npm run check:layers` prints it): no file imports another that
 * imports it back, no folder does, no folder reaches into a higher layer, every folder has a layer, and no file
 * passes 400 lines (then it is probably two ideas).
 */
import { expect, it } from "vitest";
import { layout } from "../scripts/import-graph.ts";

const l = layout();

it("has no circles between files or folders", () => {
  expect(l.fileCircles).toEqual([]);
  expect(l.folderCircles).toEqual([]);
});

it("imports only from its own layer or lower ones, and places every folder in a layer", () => {
  expect(l.upward).toEqual([]);
  expect(l.unplaced).toEqual([]);
});

it("keeps every file under 400 lines", () => {
  expect(l.long).toEqual([]);
});
