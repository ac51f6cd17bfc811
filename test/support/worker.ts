/** Runs the built Workers bundle (dist/worker.js and its static assets, built by the global setup) inside workerd via Miniflare. */
import type { Readable } from "node:stream";
import { Miniflare } from "miniflare";
import { WORKER_ASSETS, WORKER_BUNDLE } from "../../scripts/build-worker.ts";

export interface TestWorker {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  scheduled(cron?: string): Promise<unknown>;
  logs: string[];
  dispose(): Promise<void>;
}

/** `hyperdrives`: Hyperdrive bindings by name, each with the origin database's URL (Miniflare's local Hyperdrive). */
export async function startWorker(bindings: Record<string, string>, options: { hyperdrives?: Record<string, string> } = {}): Promise<TestWorker> {
  const logs: string[] = [];
  const mf = new Miniflare({
    modules: true,
    scriptPath: WORKER_BUNDLE,
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat"],
    bindings,
    hyperdrives: options.hyperdrives,
    // As wrangler.toml's [assets]: the Worker runs first for every request and reads the files through ASSETS.
    assets: { directory: WORKER_ASSETS, binding: "ASSETS", routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true } },
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.on("data", (chunk: Buffer) => logs.push(...chunk.toString().split("\n").filter(Boolean)));
      stderr.on("data", (chunk: Buffer) => logs.push(...chunk.toString().split("\n").filter(Boolean)));
    },
  });
  await mf.ready;
  return {
    logs,
    fetch: (path, init) => mf.dispatchFetch(`http://pglens.test${path}`, init as never) as unknown as Promise<Response>,
    async scheduled(cron = "* * * * *") {
      const worker = (await mf.getWorker()) as unknown as { scheduled(options: { cron: string }): Promise<unknown> };
      return worker.scheduled({ cron });
    },
    dispose: () => mf.dispose(),
  };
}
