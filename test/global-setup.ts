import type { TestProject } from "vitest/node";
import { buildWorker } from "../scripts/build-worker.ts";
import { startEmbeddedPostgres, systemPostgresUrl } from "./support/postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Superuser URL of a PostgreSQL 17 started for this test run. */
    pg17Url: string;
    /** The machine's PostgreSQL 15, or "" when there is none. */
    systemPgUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // The Workers tests load this bundle, so it always reflects the sources under test.
  await buildWorker();
  const pg17 = await startEmbeddedPostgres();
  project.provide("pg17Url", pg17.url);
  project.provide("systemPgUrl", (await systemPostgresUrl()) ?? "");
  return async () => {
    await pg17.stop();
  };
}
