/**
 * npm run bench:startup — time from `pglens serve` to a healthy /health on the embedded datastore: the first
 * start (initialise PGlite, migrate, create the admin, load the demo history) and a later start, median of 3
 * runs each, printed beside the targets (first < 15 s, later < 3 s).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/support/postgres.ts";

const BIN = fileURLToPath(new URL("../bin/pglens.js", import.meta.url));
const RUNS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function timeToHealthy(dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [BIN, "serve"], {
    env: { ...process.env, PORT: String(port), PGLENS_DATA_DIR: dataDir, PGLENS_DATASTORE_URL: "" },
    stdio: "ignore",
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`pglens serve exited with ${child.exitCode}`);
      if (
        await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return (performance.now() - started) / 1000;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
}

async function main() {
  const first: number[] = [];
  const later: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = mkdtempSync(join(tmpdir(), "pglens-startup-"));
    try {
      first.push(await timeToHealthy(dir));
      later.push(await timeToHealthy(dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    process.stderr.write(`run ${i + 1}/${RUNS}: first ${first.at(-1)!.toFixed(1)} s, later ${later.at(-1)!.toFixed(1)} s\n`);
  }
  console.log("| start | median s | target s | ratio to target |");
  console.log("|---|---:|---:|---:|");
  console.log(`| first (empty data directory) | ${median(first).toFixed(1)} | 15 | ${(median(first) / 15).toFixed(2)} |`);
  console.log(`| later | ${median(later).toFixed(1)} | 3 | ${(median(later) / 3).toFixed(2)} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
