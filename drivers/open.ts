import { mkdirSync } from "node:fs";
import WebSocket from "ws";
import { chooseDriver, type DatastoreSettings } from "./choose.ts";
import { openNetworkDriver } from "./network.ts";
import type { Driver } from "./types.ts";

/** Node entry to the driver layer: every kind, the embedded PGlite default included. */
export async function openDriver(settings: DatastoreSettings): Promise<Driver> {
  if (chooseDriver(settings) === "pglite") {
    mkdirSync(settings.dataDir, { recursive: true });
    const { openPglite } = await import("./pglite.ts");
    return openPglite(settings.dataDir);
  }
  return openNetworkDriver(settings, { webSocketConstructor: globalThis.WebSocket ?? WebSocket });
}
