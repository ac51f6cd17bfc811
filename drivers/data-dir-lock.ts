/**
 * PGlite is single-process: two processes writing one data directory corrupt it (a CLI command run while
 * `pglens serve` holds ./.pglens wrote rows the server never saw and left indexes out of step with their
 * tables). Every process that opens the directory takes this lock first: a file created exclusively, naming
 * the owner's pid and command. A lock whose process is gone is stale and taken over.
 */
import { openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";

export class DataDirLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirLockedError";
  }
}

interface Holder {
  pid: number;
  command: string;
  since: string;
}

const LOCK_FILE = "pglens.lock";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM"; // exists, owned by someone else
  }
}

function readHolder(path: string): Holder | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Holder;
  } catch {
    return null; // half-written or gone: treat as stale
  }
}

/** Takes the lock or throws DataDirLockedError saying who holds it and what to do; returns the release. */
export function lockDataDir(dataDir: string, command = `pglens ${process.argv.slice(2).join(" ")}`.trim()): () => void {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, command, since: new Date().toISOString() } satisfies Holder));
      closeSync(fd);
      const release = () => {
        if (readHolder(path)?.pid === process.pid) rmSync(path, { force: true });
        process.off("exit", release);
      };
      process.on("exit", release);
      return release;
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
      const holder = readHolder(path);
      if (holder && holder.pid !== process.pid && alive(holder.pid)) {
        throw new DataDirLockedError(
          `${holder.command} (pid ${holder.pid}) holds the embedded datastore ${dataDir}: stop it first, or do this through its REST API ` +
            `(see README: "Authentication and access control"), or use a PostgreSQL datastore (PGLENS_DATASTORE_URL) that several processes can share`,
        );
      }
      if (holder?.pid === process.pid) throw new DataDirLockedError(`this process already holds the embedded datastore ${dataDir}`);
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new DataDirLockedError(`could not lock the embedded datastore ${dataDir}`);
}
