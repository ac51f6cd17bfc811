/** Builds the real app around a given driver, capturing its log lines. */
import type { Driver } from "../../drivers/types.ts";
import { createApp } from "../../src/app.ts";
import type { AppDeps } from "../../src/http/context.ts";
import { type Config, resolveConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { nodeTransports } from "../../src/notify/node-transports.ts";
import { ROUTE_MODULES } from "../../src/routes/index.ts";
import type { newRouter } from "../../src/http/router.ts";
import { nodeDocsAssets } from "../../src/docs-assets-node.ts";
import { nodeConsoleAssets } from "../../src/console/assets-node.ts";

export function testApp(
  driver: Driver,
  options: { config?: Partial<Config>; extraRoutes?: Array<ReturnType<typeof newRouter>>; deps?: Partial<AppDeps> } = {},
) {
  const logs: Array<Record<string, unknown>> = [];
  const defaults = resolveConfig({}, { PGLENS_SECRET: "test secret for sealing passwords" });
  // Tests change rights straight in the datastore between requests, which a cached caller would not see
  // (auth/caller-cache.ts; its own tests turn it on).
  const config = { ...defaults, auth: { ...defaults.auth, cache_seconds: 0 }, ...options.config };
  const log = createLogger("debug", (line) => logs.push(JSON.parse(line)));
  const app = createApp(
    {
      config,
      log,
      datastore: { open: () => driver },
      transports: nodeTransports(),
      docsAssets: nodeDocsAssets,
      consoleAssets: nodeConsoleAssets,
      ...options.deps,
    },
    [...ROUTE_MODULES, ...(options.extraRoutes ?? [])],
  );
  return { app, logs, config };
}
