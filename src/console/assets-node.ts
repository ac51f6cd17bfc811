/** Node: the console's files read from disk, once (the Workers build script copies them from the same places). */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { CONSOLE_ASSETS, type ConsoleAssets } from "./assets.ts";

/** Name served -> the file on disk. */
export function consoleAssetPaths(): Record<string, string> {
  const resolve = createRequire(import.meta.url).resolve;
  const path = (source: string) => (source.startsWith("./") ? fileURLToPath(new URL(source, import.meta.url)) : resolve(source));
  return Object.fromEntries(Object.entries(CONSOLE_ASSETS).map(([name, a]) => [name, path(a.source)]));
}

export function readConsoleAssets(): ConsoleAssets {
  return Object.fromEntries(Object.entries(consoleAssetPaths()).map(([name, file]) => [name, readFileSync(file, "utf8")])) as ConsoleAssets;
}

let loaded: ConsoleAssets | undefined;

export async function nodeConsoleAssets(): Promise<ConsoleAssets> {
  loaded ??= readConsoleAssets();
  return loaded;
}
