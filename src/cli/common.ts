/** Shared by the `pglens` subcommands. */
import type { Driver } from "../../drivers/types.ts";
import { loadNodeConfig } from "../config-file.ts";
import { createLogger } from "../log.ts";
import { openMigratedDatastore } from "../datastore/open-migrated.ts";

/** Opens the configured datastore (migrated) for one command; info-level chatter is kept off the terminal. */
export async function withDatastore<T>(work: (db: Driver) => Promise<T>): Promise<T> {
  const config = loadNodeConfig();
  const driver = await openMigratedDatastore(config, createLogger(config.log_level === "info" ? "warn" : config.log_level));
  try {
    return await work(driver);
  } finally {
    await driver.close();
  }
}

/** Prints rows as aligned columns. */
export function printTable(header: string[], rows: Array<Array<string | number>>): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  for (const line of [header, ...rows])
    console.log(
      line
        .map((cell, i) => String(cell).padEnd(widths[i]))
        .join("  ")
        .trimEnd(),
    );
}
