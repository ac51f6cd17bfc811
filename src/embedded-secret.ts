/** The embedded datastore's secret: generated once into <data_dir>/secrets, so a laptop install needs no setup. */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { secretsDir } from "../drivers/embedded-layout.ts";

export function embeddedSecret(dataDir: string): string {
  mkdirSync(secretsDir(dataDir), { recursive: true, mode: 0o700 });
  const path = join(secretsDir(dataDir), "secret");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  return secret;
}
