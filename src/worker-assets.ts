/**
 * Workers: the static files the app serves (the API docs viewer's, the console's) come from Workers Static
 * Assets (the ASSETS binding), uploaded beside the script by scripts/build-worker.ts instead of inlined into it.
 */
import { CONSOLE_ASSETS, type ConsoleAssets } from "./console/assets.ts";
import { DOCS_FILES, type DocsAssets } from "./http/docs-page.ts";

/** Folder of each set of files inside the assets directory. */
export const WORKER_ASSET_DIRS = { docs: "docs", console: "console" } as const;

export interface AssetsBinding {
  fetch(request: Request | string): Promise<Response>;
}

async function readAll<N extends string>(assets: AssetsBinding, dir: string, names: readonly N[]): Promise<Record<N, string>> {
  const texts = await Promise.all(
    names.map(async (name) => {
      // The host is never contacted: the binding answers any URL from the uploaded files by its path.
      const res = await assets.fetch(`https://assets.pglens.invalid/${dir}/${name}`);
      if (!res.ok) throw new Error(`static asset ${dir}/${name} is missing (${res.status}): deploy with \`npm run build:worker\` first`);
      return [name, await res.text()] as const;
    }),
  );
  return Object.fromEntries(texts) as Record<N, string>;
}

/** Loaders for AppDeps, each reading its files once per isolate; undefined without the binding. */
export function workerAssetLoaders(assets: AssetsBinding | undefined) {
  if (!assets) return { docsAssets: undefined, consoleAssets: undefined };
  let docs: Promise<DocsAssets> | undefined;
  let consoleFiles: Promise<ConsoleAssets> | undefined;
  return {
    docsAssets: () => (docs ??= readAll(assets, WORKER_ASSET_DIRS.docs, Object.keys(DOCS_FILES) as Array<keyof typeof DOCS_FILES>)),
    consoleAssets: () => (consoleFiles ??= readAll(assets, WORKER_ASSET_DIRS.console, Object.keys(CONSOLE_ASSETS) as Array<keyof typeof CONSOLE_ASSETS>)),
  };
}
