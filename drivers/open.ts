import { chmodSync, mkdirSync } from "node:fs";
import WebSocket from "ws";
import { chooseDriver, type DatastoreSettings } from "./choose.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { databaseDir, prepareEmbeddedLayout, privatiseTree } from "./embedded-layout.ts";
import { openNetworkDriver } from "./network.ts";
import type { Driver } from "./types.ts";

/** Node entry to the driver layer: every kind, the embedded PGlite default included. */
export async function openDriver(settings: DatastoreSettings): Promise<Driver> {
  if (chooseDriver(settings) === "pglite") {
    // PGlite creates its files group- and world-writable; a private directory keeps everyone else out of them.
    mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(settings.dataDir, 0o700);
    const release = lockDataDir(settings.dataDir);
    try {
      const moved = prepareEmbeddedLayout(settings.dataDir);
      if (moved.length) process.stderr.write(`moved ${moved.join(", ")} of ${settings.dataDir} into its db/ and secrets/ directories\n`);
      const { openPglite } = await import("./pglite.ts");
      const driver = await openPglite(databaseDir(settings.dataDir));
      privatiseTree(settings.dataDir);
      const close = () => driver.close().finally(() => privatiseTree(settings.dataDir));
      return { ...driver, close: () => close().finally(release) };
    } catch (err) {
      release();
      throw err;
    }
  }
  return openNodeNetworkDriver(settings);
}

/** A datastore server reached over the network from Node (the primary, or a read replica of it). */
export function openNodeNetworkDriver(settings: DatastoreSettings): Driver {
  return openNetworkDriver(settings, { webSocketConstructor: globalThis.WebSocket ?? WebSocket });
}
