/** Node entry: open the datastore, migrate, serve the app, shut down gracefully. */
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { openNodeNetworkDriver } from "../drivers/open.ts";
import { replicaName } from "../drivers/read-replicas.ts";
import type { Driver } from "../drivers/types.ts";
import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { openMigratedDatastore } from "./datastore/open-migrated.ts";
import { datastoreSettings } from "./datastore/settings.ts";
import { openReadReplicas } from "./http/read-db.ts";
import { ensureFirstSuperuser } from "./auth/bootstrap.ts";
import { startAlerter } from "./alerts/alerter.ts";
import { nodeTransports } from "./notify/node-transports.ts";
import { startCollector } from "./collector/collect.ts";
import { ensureEmbeddedAdmin } from "./embedded-admin.ts";
import { nodeDocsAssets } from "./docs-assets-node.ts";
import { nodeConsoleAssets } from "./console/assets-node.ts";
import { embeddedSecret } from "./embedded-secret.ts";
import type { Logger } from "./log.ts";
import { ROUTE_MODULES } from "./routes/index.ts";
import { createSelfMetrics, selfMetricsRoutes } from "./self-metrics.ts";
import { proxyTrust } from "./trusted-proxies.ts";
import { VERSION } from "./version.ts";

/** The embedded datastore's first start: a demo connection with a generated day of history to look at. */
async function ensureDemoOnFirstStart(driver: Driver, config: Config, log: Logger): Promise<void> {
  if (!config.demo || (await driver.query("SELECT 1 FROM connections LIMIT 1")).length > 0) return;
  log.info("loading a generated day of history for the demo connection (first start only) ...");
  const { createDemoConnection } = await import("./cli/demo.ts");
  const { id, rows } = await createDemoConnection(driver);
  log.info("loaded a generated day of history as a demo connection; `npx pglens demo` registers a real local server", { connection_id: id, rows });
}

export async function runServer(config: Config, log: Logger): Promise<void> {
  const driver = await openMigratedDatastore(config, log);
  await ensureFirstSuperuser(driver, config, log);
  if (driver.kind === "pglite") {
    if (!config.secret) config = { ...config, secret: embeddedSecret(config.datastore.data_dir) };
    await ensureEmbeddedAdmin(driver, config.datastore.data_dir, log);
    await ensureDemoOnFirstStart(driver, config, log);
  }
  const replicas = openReadReplicas(config, driver.kind, (url) => openNodeNetworkDriver({ ...datastoreSettings(config), url }));
  if (replicas)
    log.info("reads may go to read replicas", {
      replicas: config.datastore.read_urls.map(replicaName),
      max_replica_lag_seconds: config.datastore.max_replica_lag_seconds,
    });
  const proxies = proxyTrust(config.trusted_proxies);
  const metrics = createSelfMetrics(driver);
  const app = createApp(
    {
      config,
      log,
      datastore: { open: () => driver, replicas },
      clientAddress: (c) => proxies.clientAddress(getConnInfo(c).remote.address, c.req.header("x-forwarded-for")),
      forwardedHttps: (c) => proxies.forwardedHttps(getConnInfo(c).remote.address, c.req.header("x-forwarded-proto")),
      transports: nodeTransports(),
      observeRequest: metrics.observeRequest,
      docsAssets: nodeDocsAssets,
      consoleAssets: nodeConsoleAssets,
    },
    [...ROUTE_MODULES, selfMetricsRoutes(metrics, config)],
  );
  const collector = config.collector.enabled ? startCollector(driver, config, log, 1000, metrics.collectorRound) : undefined;
  const alerter = config.alerter.enabled ? startAlerter(driver, config, log, nodeTransports(), metrics.alerterRound) : undefined;
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    log.info("pglens listening", {
      version: VERSION,
      url: `http://${config.host === "0.0.0.0" || config.host === "127.0.0.1" ? "localhost" : config.host}:${info.port}`,
    });
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    // Stop accepting, let in-flight requests finish, then release the datastore.
    const force = setTimeout(() => process.exit(1), 10_000).unref();
    server.close(async () => {
      await collector?.stop();
      await alerter?.stop();
      await replicas?.set.close().catch(() => {});
      await driver.close().catch(() => {});
      clearTimeout(force);
      process.exit(0);
    });
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}
