/** Opens the configured datastore and brings its schema up to date: shared by `serve` and every CLI command. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chooseDriver } from "../../drivers/choose.ts";
import { isUnavailable } from "../../drivers/errors.ts";
import { openDriver } from "../../drivers/open.ts";
import type { Driver } from "../../drivers/types.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { migrate } from "./migrate.ts";
import { datastoreSettings, describeDatastore } from "./settings.ts";
import { databaseDir } from "../../drivers/embedded-layout.ts";

const STARTUP_RETRY_MS = 2000;
const STARTUP_DEADLINE_MS = 30_000;

/** Opens the datastore and applies migrations, waiting up to 30 s for a datastore that is still starting. */
export async function openMigratedDatastore(config: Config, log: Logger): Promise<Driver> {
  const settings = datastoreSettings(config);
  if (chooseDriver(settings) === "pglite") {
    // PGlite's files live in <data_dir>/db; an install from before that layout has them at the top (moved on open).
    const first = !existsSync(join(databaseDir(settings.dataDir), "PG_VERSION")) && !existsSync(join(settings.dataDir, "PG_VERSION"));
    log.info(
      first ? `initialising the embedded datastore in ${settings.dataDir} (first start only) ...` : `opening the embedded datastore in ${settings.dataDir} ...`,
    );
  }
  const driver = await openDriver(settings);
  const where = describeDatastore(settings, driver.kind);
  const deadline = Date.now() + STARTUP_DEADLINE_MS;
  for (;;) {
    try {
      const { applied, version } = await migrate(driver, undefined, (pending) => log.info(`applying ${pending} migration${pending === 1 ? "" : "s"} ...`));
      log.info("datastore ready", { datastore: where, schema_version: version, applied: applied.map((m) => `${m.version}_${m.name}`) });
      return driver;
    } catch (err) {
      if (!isUnavailable(err) || Date.now() > deadline) {
        await driver.close().catch(() => {});
        throw new Error(`cannot prepare the datastore (${where}): ${(err as Error).message}`, { cause: err });
      }
      log.warn("datastore not reachable yet; retrying", { datastore: where, error: (err as Error).message });
      await new Promise((r) => setTimeout(r, STARTUP_RETRY_MS));
    }
  }
}
