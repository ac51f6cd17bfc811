/**
 * A real Prometheus (Debian's package, which .ci/run installs) scraping one target every 5 seconds, in a scratch
 * directory, with its HTTP API for queries; and promtool for checking an exposition.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./postgres.ts";

export interface TestPrometheus {
  url: string;
  /** An instant query's result vector. */
  query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  stop(): Promise<void>;
}

export async function startPrometheus(target: { host: string; path: string; token: string }): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "pglens-prometheus-"));
  const port = await freePort();
  writeFileSync(join(dir, "token"), target.token);
  writeFileSync(
    join(dir, "prometheus.yml"),
    [
      "global:",
      // 10 s to answer: on a loaded 2-core machine while the suite ran, the exposition once took over 5 s (the scrape
      // then fails as down); it takes well under a second since its latest-sample reads stopped being replanned.
      "  scrape_interval: 10s",
      "  scrape_timeout: 10s",
      "scrape_configs:",
      "  - job_name: pglens",
      "    honor_timestamps: true",
      `    metrics_path: ${target.path}`,
      "    authorization:",
      `      credentials_file: ${join(dir, "token")}`,
      "    static_configs:",
      `      - targets: ["${target.host}"]`,
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(
    "prometheus",
    [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: "ignore" },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("prometheus did not become ready");
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      if (body.status !== "success") throw new Error(`prometheus query ${expr}: ${body.error}`);
      return body.data.result;
    },
    async stop() {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** promtool's verdict on an exposition: its exit code and what it printed. */
export function promtoolCheck(text: string): { status: number | null; output: string } {
  const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
