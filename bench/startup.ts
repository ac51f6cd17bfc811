/**
 * npm run bench:startup — time from `pglens serve` to a healthy /health on the embedded datastore: the first
 * start (initialise PGlite, migrate, create the admin, load the demo history) and a later start, median of 3
 * runs each, for the installed package (packed and installed into a scratch directory first) and for this source
 * checkout (TypeScript compiled at start by tsx), printed beside the targets (first < 15 s, later < 3 s).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/support/postgres.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SOURCE_BIN = join(ROOT, "bin", "pglens.js");
const RUNS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Packs this checkout and installs the tarball into an empty directory; returns the installed `pglens`. */
function installPackage(scratch: string): string {
  const app = join(scratch, "app");
  mkdirSync(app, { recursive: true });
  const packed = execFileSync("npm", ["pack", "--silent", "--pack-destination", scratch], { cwd: ROOT, encoding: "utf8" }).trim().split("\n").at(-1)!;
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "bench", private: true }));
  execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", "--prefer-offline", join(scratch, packed)], { cwd: app });
  return join(app, "node_modules", ".bin", "pglens");
}

async function timeToHealthy(bin: string, dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [bin, "serve"], {
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

async function measure(name: string, bin: string) {
  const first: number[] = [];
  const later: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = mkdtempSync(join(tmpdir(), "pglens-startup-"));
    try {
      first.push(await timeToHealthy(bin, dir));
      later.push(await timeToHealthy(bin, dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    process.stderr.write(`${name}, run ${i + 1}/${RUNS}: first ${first.at(-1)!.toFixed(1)} s, later ${later.at(-1)!.toFixed(1)} s\n`);
  }
  return { name, first: median(first), later: median(later) };
}

async function main() {
  const scratch = mkdtempSync(join(tmpdir(), "pglens-startup-package-"));
  try {
    process.stderr.write("packing and installing the package ...\n");
    const results = [await measure("installed package", installPackage(scratch)), await measure("source checkout (tsx)", SOURCE_BIN)];
    console.log("| pglens | start | median s | target s | ratio to target |");
    console.log("|---|---|---:|---:|---:|");
    for (const r of results) {
      console.log(`| ${r.name} | first (empty data directory) | ${r.first.toFixed(1)} | 15 | ${(r.first / 15).toFixed(2)} |`);
      console.log(`| ${r.name} | later | ${r.later.toFixed(1)} | 3 | ${(r.later / 3).toFixed(2)} |`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
