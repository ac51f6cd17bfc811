/** Node side of configuration: reads the PGLENS_CONFIG file and the process environment. */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { asDocument, type Config, ConfigError, resolveConfig } from "./config.ts";

export function loadNodeConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const path = env.PGLENS_CONFIG;
  let document: Record<string, unknown> = {};
  if (path) {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw new ConfigError(`cannot read the configuration file PGLENS_CONFIG=${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = parseYaml(text);
    } catch (err) {
      throw new ConfigError(`invalid configuration in ${path}: ${(err as Error).message}`);
    }
    document = asDocument(parsed, path);
  }
  return resolveConfig(document, env);
}
