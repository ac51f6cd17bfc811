// Bundles src/worker.ts into dist/worker.js for Workers (wrangler deploys it; tests load it in Miniflare), and
// copies the static files it serves (the API docs viewer's, the console's) to dist/worker-assets/, which
// wrangler.toml uploads as Workers Static Assets: kept out of the script, they cost the isolate nothing at start.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { consoleAssetPaths } from "../src/console/assets-node.ts";
import { docsAssetPaths } from "../src/docs-assets-node.ts";
import { WORKER_ASSET_DIRS } from "../src/worker-assets.ts";

export const WORKER_BUNDLE = fileURLToPath(new URL("../dist/worker.js", import.meta.url));
export const WORKER_ASSETS = fileURLToPath(new URL("../dist/worker-assets", import.meta.url));

/** What `[assets]` uploads: docs/<file> and console/<file>, as the app names them. */
function copyAssets() {
  rmSync(WORKER_ASSETS, { recursive: true, force: true });
  const files: Array<[string, string]> = [
    ...Object.entries(docsAssetPaths()).map(([f, from]): [string, string] => [join(WORKER_ASSET_DIRS.docs, f), from]),
    ...Object.entries(consoleAssetPaths()).map(([f, from]): [string, string] => [join(WORKER_ASSET_DIRS.console, f), from]),
  ];
  for (const [to, from] of files) {
    mkdirSync(join(WORKER_ASSETS, to, ".."), { recursive: true });
    copyFileSync(from, join(WORKER_ASSETS, to));
  }
  // Nothing but these files is served from the directory; the Worker runs first for every request (wrangler.toml).
  writeFileSync(join(WORKER_ASSETS, ".assetsignore"), ".assetsignore\n");
}

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
    // Minified to about half the size an isolate parses at start; names kept for stack traces and error names,
    // and a source map beside it (wrangler uploads it with upload_source_maps).
    minify: true,
    keepNames: true,
    sourcemap: "external",
    logLevel: "warning",
  });
  copyAssets();
  return WORKER_BUNDLE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const out = await buildWorker();
  console.log(`built ${out} and ${WORKER_ASSETS}/ in ${Date.now() - started} ms`);
}
