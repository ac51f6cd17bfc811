/** Node: the docs viewer's files read from the installed swagger-ui-dist package, once. */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { DOCS_FILES, type DocsAssets } from "./http/docs-page.ts";

let loaded: Promise<DocsAssets> | undefined;

export function nodeDocsAssets(): Promise<DocsAssets> {
  loaded ??= (async () => {
    const resolve = createRequire(import.meta.url).resolve;
    const entries = await Promise.all(Object.keys(DOCS_FILES).map(async (f) => [f, await readFile(resolve(`swagger-ui-dist/${f}`), "utf8")] as const));
    return Object.fromEntries(entries) as DocsAssets;
  })();
  return loaded;
}
