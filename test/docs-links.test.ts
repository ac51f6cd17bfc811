/**
 * The README stays a front door (about 300 lines at most) and the documentation holds together: every relative
 * link in README.md, docs/ and bench/RESULTS.md names a file in the repository, and nothing points outside it.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const DOCS = [
  "README.md",
  "bench/RESULTS.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

it("keeps the README at README size", () => {
  expect(readFileSync(join(ROOT, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(300);
});

it.each(DOCS)("%s links only to files that exist, inside the repository", (doc) => {
  const text = readFileSync(join(ROOT, doc), "utf8");
  const targets = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/.test(t));
  const broken = targets.filter((t) => !existsSync(resolve(ROOT, dirname(doc), t)) || !resolve(ROOT, dirname(doc), t).startsWith(`${ROOT}/`));
  expect(broken).toEqual([]);
  expect(text).not.toMatch(/\.\.\/shared|SPEC\.md|DESIGN\.md/);
});
