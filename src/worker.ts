/** Cloudflare Workers entry: the same app, configured from bindings, over a network driver. */
import type { ExecutionContext } from "hono";
import { chooseDriver } from "../drivers/choose.ts";
import { openNetworkDriver } from "../drivers/network.ts";
import { createApp } from "./app.ts";
import { type Config, configFromBindings } from "./config.ts";
import { ensureFirstSuperuser } from "./auth/bootstrap.ts";
import { alertAndDeliver } from "./alerts/alerter.ts";
import { collectDue } from "./collector/collect.ts";
import { migrate } from "./datastore/migrate.ts";
import { datastoreSettings } from "./datastore/settings.ts";
import { openReadReplicas } from "./http/read-db.ts";
import { createLogger, type Logger } from "./log.ts";
import { VERSION } from "./version.ts";
import { type AssetsBinding, workerAssetLoaders } from "./worker-assets.ts";

interface ScheduledController {
  scheduledTime: number;
  cron: string;
}
type Bindings = Record<string, unknown>;

interface Isolate {
  config: Config;
  log: Logger;
  app: ReturnType<typeof createApp>;
  migrated?: Promise<void>;
}

let isolate: Isolate | undefined;

/** Workers cannot share sockets between requests: each request, tick or migration opens its own driver and closes it. */
const PER_REQUEST = { perRequest: true };

/** Built once per isolate: bindings do not change while it lives. */
function boot(env: Bindings): Isolate {
  if (isolate) return isolate;
  const config = configFromBindings(env);
  const log = createLogger(config.log_level);
  const settings = datastoreSettings(config);
  // Replicas are known once settings are: their drivers, like the primary's, live for one request.
  const replicas = settings.url
    ? openReadReplicas(config, chooseDriver(settings), (url) => openNetworkDriver({ ...settings, url }, PER_REQUEST), PER_REQUEST)
    : undefined;
  const app = createApp({
    config,
    log,
    datastore: { open: () => openNetworkDriver(settings, PER_REQUEST), release: (d) => d.close(), replicas },
    clientAddress: (c) => c.req.header("cf-connecting-ip"),
    ...workerAssetLoaders(env.ASSETS as AssetsBinding | undefined),
  });
  isolate = { config, log, app };
  return isolate;
}

/** Migrations run once per isolate; a failure is retried by the next request instead of failing this one. */
function ensureMigrated(state: Isolate): Promise<void> {
  state.migrated ??= (async () => {
    const driver = openNetworkDriver(datastoreSettings(state.config), PER_REQUEST);
    try {
      const { applied, version } = await migrate(driver);
      if (applied.length) state.log.info("datastore migrated", { schema_version: version, applied: applied.map((m) => m.version) });
      await ensureFirstSuperuser(driver, state.config, state.log);
    } finally {
      await driver.close().catch(() => {});
    }
  })().catch((err: Error) => {
    state.log.warn("datastore migration deferred", { error: err.message });
    state.migrated = undefined;
  });
  return state.migrated;
}

/** The Cron Trigger fires each minute: collection stops claiming after this, leaving time for the alerter. */
const CRON_COLLECT_MS = 40_000;

const NO_DATASTORE = "no datastore configured: set the PGLENS_DATASTORE_URL secret (a Postgres URL, e.g. Neon): wrangler secret put PGLENS_DATASTORE_URL";

/** Without a datastore every path answers 503 saying how to fix it; /health reports `unconfigured`. */
function unconfigured(request: Request): Response {
  if (new URL(request.url).pathname === "/health") return Response.json({ status: "unconfigured", version: VERSION, error: NO_DATASTORE }, { status: 503 });
  return Response.json({ error: NO_DATASTORE }, { status: 503 });
}

function misconfigured(err: unknown): Response {
  console.log(JSON.stringify({ level: "error", msg: "invalid configuration", error: (err as Error).message }));
  return Response.json({ error: `pglens is misconfigured: ${(err as Error).message}` }, { status: 500 });
}

export default {
  async fetch(request: Request, env: Bindings, ctx: ExecutionContext): Promise<Response> {
    let state: Isolate;
    try {
      state = boot(env);
    } catch (err) {
      return misconfigured(err);
    }
    if (!state.config.datastore.url) return unconfigured(request);
    await ensureMigrated(state);
    return state.app.fetch(request, env, ctx);
  },

  /** Cron Trigger: collect from the monitored servers whose probes are due, then run the alerter's round. */
  async scheduled(controller: ScheduledController, env: Bindings, ctx: ExecutionContext): Promise<void> {
    const state = boot(env);
    state.log.info("scheduled tick", { cron: controller.cron, scheduled_time: new Date(controller.scheduledTime).toISOString() });
    if (!state.config.datastore.url) {
      state.log.error("scheduled tick skipped", { error: NO_DATASTORE });
      return;
    }
    ctx.waitUntil(
      (async () => {
        await ensureMigrated(state);
        const driver = openNetworkDriver(datastoreSettings(state.config), PER_REQUEST);
        try {
          if (state.config.collector.enabled) {
            const tick = await collectDue(driver, state.config, state.log, { deadlineMs: CRON_COLLECT_MS }).catch((err: Error) =>
              state.log.error("collection tick failed", { error: err.message }),
            );
            if (tick)
              state.log.info("collection tick", {
                claimed: tick.claimed,
                stored_rows: tick.outcomes.reduce((n, o) => n + o.rows, 0),
                unreachable: tick.unreachable.length,
              });
          }
          if (state.config.alerter.enabled) {
            // No SMTP on Workers: email notifications wait for a Node alerter (and say so in their history).
            const done = await alertAndDeliver(driver, state.config, state.log, {}).catch((err: Error) =>
              state.log.error("alerter round failed", { error: err.message }),
            );
            if (done?.round.ran)
              state.log.info("alerter round", {
                connections: done.round.connections,
                raised: done.round.raised.length,
                updated: done.round.updated,
                cleared: done.round.cleared.length,
              });
            if (done && done.delivery.sent + done.delivery.failed > 0) state.log.info("notifications", { ...done.delivery });
          }
        } finally {
          await driver.close().catch(() => {});
        }
      })(),
    );
  },
};
