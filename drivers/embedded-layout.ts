/**
 * What lives under the embedded datastore's directory (`./.pglens`): PGlite's files in `db/`, the generated
 * secret and initial admin password in `secrets/` (mode 0700, files 0600), the process lock at the top. The
 * secrets stay out of PGlite's directory so a copy or wipe of the database does not carry or lose them by
 * accident. Installs from before this layout (PGlite's files at the top) are moved in place once, under the lock.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";

export const databaseDir = (dataDir: string) => join(dataDir, "db");
export const secretsDir = (dataDir: string) => join(dataDir, "secrets");

const SECRET_FILES = ["secret", "initial-admin-password"];
const KEEP_AT_TOP = new Set(["db", "secrets", "pglens.lock"]);

/** Creates the private directories; returns what an old layout had moved, for the start-up log. */
export function prepareEmbeddedLayout(dataDir: string): string[] {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const moved: string[] = [];
  const oldDatabase = existsSync(join(dataDir, "PG_VERSION")) && !existsSync(databaseDir(dataDir));
  mkdirSync(secretsDir(dataDir), { recursive: true, mode: 0o700 });
  chmodSync(secretsDir(dataDir), 0o700);
  for (const file of SECRET_FILES) {
    if (!existsSync(join(dataDir, file))) continue;
    renameSync(join(dataDir, file), join(secretsDir(dataDir), file));
    moved.push(file);
  }
  if (oldDatabase) {
    mkdirSync(databaseDir(dataDir), { mode: 0o700 });
    for (const entry of readdirSync(dataDir)) {
      if (!KEEP_AT_TOP.has(entry)) renameSync(join(dataDir, entry), join(databaseDir(dataDir), entry));
    }
    moved.push("the database files");
  }
  return moved;
}

/**
 * PGlite writes its files group- and world-writable (0666, whatever the umask); the private top directory
 * already keeps others out, and this takes every group and other permission off the files as well.
 */
export function privatiseTree(path: string): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.mode & 0o077) chmodSync(path, st.mode & 0o700);
  if (st.isDirectory()) for (const entry of readdirSync(path)) privatiseTree(join(path, entry));
}
