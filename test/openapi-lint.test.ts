/**
 * openapi.gen.json (which a staleness test holds equal to what the app serves) lints clean under Redocly's
 * recommended rules; the few problems accepted on purpose are listed with their reasons in .redocly.lint-ignore.yaml.
 */
import { fileURLToPath } from "node:url";
import { lint, loadConfig } from "@redocly/openapi-core";
import { expect, it } from "vitest";

const root = (file: string) => fileURLToPath(new URL(`../${file}`, import.meta.url));

it("lints clean with Redocly's recommended rules", async () => {
  const config = await loadConfig({ configPath: root("redocly.yaml") });
  const problems = await lint({ ref: root("openapi.gen.json"), config });
  const open = problems.filter((p) => !p.ignored).map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
  expect(open).toEqual([]);
  expect(problems.length).toBeGreaterThan(0); // the accepted ones are found, so the rules did run
});
