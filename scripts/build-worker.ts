// Bundles src/worker.ts into dist/worker.js for Workers (wrangler deploys it; tests load it in Miniflare).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

export const WORKER_BUNDLE = fileURLToPath(new URL("../dist/worker.js", import.meta.url));

export async function buildWorker() {
  await build({
    entryPoints: [fileURLToPath(new URL("../src/worker.ts", import.meta.url))],
    outfile: WORKER_BUNDLE,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["node:*", "cloudflare:*", "pg-native"],
    // node-postgres is CommonJS and requires Node built-ins, which workerd offers under nodejs_compat.
    banner: { js: 'import { createRequire } from "node:module"; const require = createRequire("/");' },
    logLevel: "warning",
  });
  return WORKER_BUNDLE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const out = await buildWorker();
  console.log(`built ${out} in ${Date.now() - started} ms`);
}
