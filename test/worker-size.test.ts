/** The Worker as built by the global setup: a script small enough for a quick isolate start, its static files as Workers Static Assets. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { WORKER_ASSETS } from "../scripts/build-worker.ts";
import { WORKER_SIZE_BOUND_KIB, workerUploadSize } from "../scripts/worker-size.ts";
import { CONSOLE_ASSETS } from "../src/console/assets.ts";
import { DOCS_FILES } from "../src/http/docs-page.ts";

it(`wrangler would upload a script under ${WORKER_SIZE_BOUND_KIB} KiB, with the docs viewer's and the console's files as assets`, async () => {
  const { kib, output } = await workerUploadSize();
  expect(kib).toBeLessThan(WORKER_SIZE_BOUND_KIB);
  expect(output).toMatch(/env\.ASSETS\s+Assets/);
  for (const file of [...Object.keys(DOCS_FILES).map((f) => join("docs", f)), ...Object.keys(CONSOLE_ASSETS).map((f) => join("console", f))])
    expect(existsSync(join(WORKER_ASSETS, file)), file).toBe(true);
}, 180_000);
