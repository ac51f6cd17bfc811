// Bundles src/worker.ts into dist/worker.js for Workers (wrangler deploys it; tests load it in Miniflare).
import { build, type Plugin } from "esbuild";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { DOCS_FILES } from "../src/http/docs-page.ts";
import { readConsoleAssets } from "../src/console/assets-node.ts";

export const WORKER_BUNDLE = fileURLToPath(new URL("../dist/worker.js", import.meta.url));

/** `pglens:docs-assets`: the docs viewer's files from swagger-ui-dist, inlined as strings (Workers have no file system). */
const docsAssets: Plugin = {
  name: "pglens-docs-assets",
  setup(b) {
    b.onResolve({ filter: /^pglens:docs-assets$/ }, (args) => ({ path: args.path, namespace: "pglens-docs-assets" }));
    b.onLoad({ filter: /.*/, namespace: "pglens-docs-assets" }, () => {
      const resolve = createRequire(import.meta.url).resolve;
      const files = Object.fromEntries(Object.keys(DOCS_FILES).map((f) => [f, readFileSync(resolve(`swagger-ui-dist/${f}`), "utf8")]));
      return { contents: `export default ${JSON.stringify(files)};`, loader: "js" };
    });
  },
};

/** `pglens:console-assets`: the console's chart library and page scripts, inlined likewise. */
const consoleAssets: Plugin = {
  name: "pglens-console-assets",
  setup(b) {
    b.onResolve({ filter: /^pglens:console-assets$/ }, (args) => ({ path: args.path, namespace: "pglens-console-assets" }));
    b.onLoad({ filter: /.*/, namespace: "pglens-console-assets" }, () => ({
      contents: `export default ${JSON.stringify(readConsoleAssets())};`,
      loader: "js",
    }));
  },
};

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
    plugins: [docsAssets, consoleAssets],
    logLevel: "warning",
  });
  return WORKER_BUNDLE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const out = await buildWorker();
  console.log(`built ${out} in ${Date.now() - started} ms`);
}
