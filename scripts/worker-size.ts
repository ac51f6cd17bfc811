// `npm run size:worker`: builds the Worker and prints what `wrangler deploy` would upload as its script, against
// the bound an isolate's start can afford; the static files go to Workers Static Assets and are not counted.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { WORKER_ASSETS, WORKER_BUNDLE, buildWorker } from "./build-worker.ts";

export const WORKER_SIZE_BOUND_KIB = 2500;

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Measures the build in dist/ as it is: wrangler runs in a copy with wrangler.toml's [build] step left out, so
 * nothing that reads dist/ meanwhile (the Worker tests) sees it rewritten.
 */
export async function workerUploadSize(): Promise<{ kib: number; gzipKib: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "pglens-worker-size-"));
  try {
    cpSync(WORKER_BUNDLE, join(dir, "dist", "worker.js"));
    cpSync(`${WORKER_BUNDLE}.map`, join(dir, "dist", "worker.js.map"));
    cpSync(WORKER_ASSETS, join(dir, "dist", "worker-assets"), { recursive: true });
    const config = readFileSync(join(ROOT, "wrangler.toml"), "utf8").replace(/^\[build\]\n(?:[^[\n].*\n)*/m, "");
    writeFileSync(join(dir, "wrangler.toml"), config);
    const { stdout, stderr } = await promisify(execFile)(join(ROOT, "node_modules", ".bin", "wrangler"), ["deploy", "--dry-run"], {
      cwd: dir,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
      maxBuffer: 16 * 1024 * 1024,
    });
    const output = stdout + stderr;
    const m = output.match(/Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/);
    if (!m) throw new Error(`wrangler deploy --dry-run printed no upload size:\n${output}`);
    return { kib: Number(m[1]), gzipKib: Number(m[2]), output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWorker();
  const { kib, gzipKib } = await workerUploadSize();
  console.log(`Worker script: ${kib.toFixed(0)} KiB (gzip ${gzipKib.toFixed(0)} KiB); bound ${WORKER_SIZE_BOUND_KIB} KiB`);
  if (kib > WORKER_SIZE_BOUND_KIB) process.exitCode = 1;
}
