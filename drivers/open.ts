import { mkdirSync } from "node:fs";
import WebSocket from "ws";
import { chooseDriver, type DatastoreSettings } from "./choose.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { openNetworkDriver } from "./network.ts";
import type { Driver } from "./types.ts";

/** Node entry to the driver layer: every kind, the embedded PGlite default included. */
export async function openDriver(settings: DatastoreSettings): Promise<Driver> {
  if (chooseDriver(settings) === "pglite") {
    mkdirSync(settings.dataDir, { recursive: true });
    const release = lockDataDir(settings.dataDir);
    try {
      const { openPglite } = await import("./pglite.ts");
      const driver = await openPglite(settings.dataDir);
      return { ...driver, close: () => driver.close().finally(release) };
    } catch (err) {
      release();
      throw err;
    }
  }
  return openNetworkDriver(settings, { webSocketConstructor: globalThis.WebSocket ?? WebSocket });
}
