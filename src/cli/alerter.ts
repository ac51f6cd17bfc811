/** `pglens alerter [--once]`: the alerter and notification delivery on their own, beside (or instead of) `pglens serve`. */
import { parseArgs } from "node:util";
import { alertAndDeliver, startAlerter } from "../alerts/alerter.ts";
import { loadNodeConfig } from "../config-file.ts";
import { openMigratedDatastore } from "../datastore/open-migrated.ts";
import { createLogger } from "../log.ts";
import { nodeTransports } from "../notify/node-transports.ts";
import { parserOptions } from "./options.ts";

export async function alerterCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: parserOptions("alerter") });
  const config = loadNodeConfig();
  const log = createLogger(config.log_level);
  const driver = await openMigratedDatastore(config, log);
  if (values.once) {
    try {
      const { round, delivery } = await alertAndDeliver(driver, config, log, nodeTransports());
      console.error(
        round.ran
          ? `alerter round over ${round.connections} connection(s): ${round.raised.length} raised, ${round.updated} updated, ${round.cleared.length} cleared`
          : `another alerter ran this round less than ${config.alerter.interval_seconds} s ago; nothing to evaluate`,
      );
      console.error(`notifications: ${delivery.sent} sent, ${delivery.failed} failed (will retry or gave up), ${delivery.suppressed} suppressed by blackouts`);
      return 0;
    } finally {
      await driver.close();
    }
  }
  const alerter = startAlerter(driver, config, log, nodeTransports());
  const stop = async () => {
    await alerter.stop();
    await driver.close();
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  return -1;
}
