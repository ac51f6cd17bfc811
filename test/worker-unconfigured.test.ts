/** On Workers without a PGLENS_DATASTORE_URL binding: 503 everywhere, saying how to fix it, instead of 500s. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startWorker, type TestWorker } from "./support/worker.ts";

let worker: TestWorker;
beforeAll(async () => {
  worker = await startWorker({ PGLENS_SECRET: "a secret for this test" });
});
afterAll(() => worker.dispose());

it("answers 503 with the fix on every path, and /health says unconfigured", async () => {
  const health = await worker.fetch("/health");
  expect(health.status).toBe(503);
  expect(await health.json()).toMatchObject({ status: "unconfigured", error: expect.stringContaining("set the PGLENS_DATASTORE_URL secret") });
  for (const path of ["/api/v1/connections", "/api/v1/auth/login", "/mcp/v1", "/nowhere"]) {
    const res = await worker.fetch(path, { method: path.includes("login") ? "POST" : "GET" });
    expect(res.status, path).toBe(503);
    expect((await res.json()) as { error: string }).toEqual({
      error: expect.stringContaining("no datastore configured: set the PGLENS_DATASTORE_URL secret (a Postgres URL, e.g. Neon)"),
    });
  }
  await worker.scheduled(); // the Cron Trigger skips its work and says why, rather than failing
  expect(worker.logs.some((l) => l.includes('"msg":"scheduled tick skipped"') && l.includes("PGLENS_DATASTORE_URL"))).toBe(true);
});
