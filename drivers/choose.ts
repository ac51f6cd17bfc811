import type { DriverKind, NeonEndpoints } from "./types.ts";

export interface DatastoreSettings {
  url?: string;
  driver?: DriverKind;
  dataDir: string;
  neon?: NeonEndpoints;
}

/** The driver a configuration asks for: explicit choice, else embedded without a URL, else by host. */
export function chooseDriver(settings: Pick<DatastoreSettings, "url" | "driver">): DriverKind {
  if (settings.driver) return settings.driver;
  if (!settings.url) return "pglite";
  const host = new URL(settings.url).hostname;
  return host.endsWith(".neon.tech") ? "neon-http" : "pg";
}
