/** Runs the real `pglens` command as a child process. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/pglens.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

/** Starts `pglens serve` and resolves once /health answers 200. */
export async function startServe(env: Record<string, string>, port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, "serve"], { env: { ...process.env, ...env, PORT: String(port) } });
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  for (let i = 0; i < 120; i++) {
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
