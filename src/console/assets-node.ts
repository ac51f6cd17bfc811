/** Node (and the Workers build script): the console's files read from disk, once. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { CONSOLE_ASSETS, type ConsoleAssets } from "./assets.ts";

export function readConsoleAssets(): ConsoleAssets {
  const resolve = createRequire(import.meta.url).resolve;
  const path = (source: string) => (source.startsWith("./") ? fileURLToPath(new URL(source, import.meta.url)) : resolve(source));
  return Object.fromEntries(Object.entries(CONSOLE_ASSETS).map(([name, a]) => [name, readFileSync(path(a.source), "utf8")])) as ConsoleAssets;
}

let loaded: ConsoleAssets | undefined;

export async function nodeConsoleAssets(): Promise<ConsoleAssets> {
  loaded ??= readConsoleAssets();
  return loaded;
}
