import { chooseDriver, type DatastoreSettings } from "./choose.ts";
import { openNeonHttp, openNeonWs, type NeonOptions } from "./neon.ts";
import { openPg } from "./pg.ts";
import type { Driver } from "./types.ts";

/**
 * Opens a driver that reaches its server over the network; the only kinds Workers can use. `perRequest`: the
 * driver is closed after one request (Workers), so it keeps no prepared statements.
 */
export function openNetworkDriver(settings: DatastoreSettings, extra: Pick<NeonOptions, "webSocketConstructor"> & { perRequest?: boolean } = {}): Driver {
  const kind = chooseDriver(settings);
  if (kind === "pglite") throw new Error("the embedded PGlite datastore runs only on Node: set PGLENS_DATASTORE_URL");
  if (!settings.url) throw new Error(`driver ${kind} needs PGLENS_DATASTORE_URL`);
  const { perRequest, ...rest } = extra;
  const neon = { ...settings.neon, ...rest };
  if (kind === "neon-http") return openNeonHttp(settings.url, neon);
  if (kind === "neon-ws") return openNeonWs(settings.url, neon);
  return openPg(settings.url, perRequest ? { plans: false } : {});
}
