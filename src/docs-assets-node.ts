/** Node: the docs viewer's files read from the installed swagger-ui-dist package, once. */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { DOCS_FILES, type DocsAssets } from "./http/docs-page.ts";

let loaded: Promise<DocsAssets> | undefined;

/** Name served -> the file in the installed swagger-ui-dist package (the Workers build script copies them). */
export function docsAssetPaths(): Record<string, string> {
  const resolve = createRequire(import.meta.url).resolve;
  return Object.fromEntries(Object.keys(DOCS_FILES).map((f) => [f, resolve(`swagger-ui-dist/${f}`)]));
}

export function nodeDocsAssets(): Promise<DocsAssets> {
  loaded ??= (async () => {
    const entries = await Promise.all(Object.entries(docsAssetPaths()).map(async ([f, path]) => [f, await readFile(path, "utf8")] as const));
    return Object.fromEntries(entries) as DocsAssets;
  })();
  return loaded;
}
