/** Runs the real `pglens` command as a child process. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/pglens.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}, input?: string, bin = BIN): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

/**
 * A first start on a busy machine can take a minute (the embedded datastore initialises its files, tsx compiles
 * the sources); the wait is a deadline on progress polling, not a fixed sleep.
 */
const SERVE_DEADLINE_MS = 180_000;

/** Starts `pglens serve` and resolves once /health answers 200. */
export async function startServe(env: Record<string, string>, port: number, bin = BIN): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [bin, "serve"], { env: { ...process.env, ...env, PORT: String(port) } });
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  for (const deadline = Date.now() + SERVE_DEADLINE_MS; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error(`pglens serve exited early:\n${output}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, output: () => output };
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGKILL");
  throw new Error(`pglens serve did not become healthy:\n${output}`);
}
