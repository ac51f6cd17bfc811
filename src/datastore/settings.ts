import type { DatastoreSettings } from "../../drivers/choose.ts";
import type { Config } from "../config.ts";

export function datastoreSettings(config: Config): DatastoreSettings {
  const { url, driver, data_dir, neon } = config.datastore;
  return {
    url,
    driver,
    dataDir: data_dir,
    neon: { fetchEndpoint: neon.fetch_endpoint, wsProxy: neon.ws_proxy, secureWebSocket: neon.secure_websocket },
  };
}

/** Where the datastore is, for log lines: never the password. */
export function describeDatastore(settings: DatastoreSettings, kind: string): string {
  if (!settings.url) return `${kind} (embedded, ${settings.dataDir})`;
  const url = new URL(settings.url);
  return `${kind} ${url.hostname}${url.port ? `:${url.port}` : ""}${url.pathname}`;
}
