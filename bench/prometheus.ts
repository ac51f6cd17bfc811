/**
 * bench:metrics' comparison with Prometheus: when `prometheus` and `promtool` are on the PATH (Debian package
 * `prometheus`), the same pg_stat_database history is written as OpenMetrics, turned into TSDB blocks with
 * `promtool tsdb create-blocks-from openmetrics`, served by a Prometheus on a free port, and the PromQL
 * equivalent of each pglens request is timed through its HTTP API.
 */
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface DatabaseHistory {
  start: number;
  stepSeconds: number;
  samples: number;
  databases: number;
  /** The values of database `d` at sample `j`, as the pglens side loads them. */
  row(j: number, d: number): { numbackends: number; xact_commit: number; blk_read_time: number };
}

export interface Prometheus {
  /** Milliseconds one PromQL range query over [start, end] (epoch ms) in steps of `step` seconds takes, answer read. */
  time(query: string, start: number, end: number, step: number): Promise<number>;
  stop(): Promise<void>;
}

export const prometheusFound = () => ["prometheus", "promtool"].every((b) => spawnSync(b, ["--version"], { stdio: "ignore" }).status === 0);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** One family per column, each series' samples in time order (OpenMetrics wants counters named *_total). */
async function writeOpenMetrics(path: string, h: DatabaseHistory): Promise<void> {
  const out = createWriteStream(path);
  const write = (line: string) => (out.write(line) ? Promise.resolve() : new Promise<void>((r) => out.once("drain", () => r())));
  const families: Array<[string, "gauge" | "counter", (v: ReturnType<DatabaseHistory["row"]>) => number]> = [
    ["pg_numbackends", "gauge", (v) => v.numbackends],
    ["pg_xact_commit", "counter", (v) => v.xact_commit],
    ["pg_blk_read_time", "counter", (v) => v.blk_read_time],
  ];
  for (const [name, type, pick] of families) {
    await write(`# TYPE ${name} ${type}\n`);
    const series = type === "counter" ? `${name}_total` : name;
    for (let d = 0; d < h.databases; d++) {
      let chunk = "";
      for (let j = 0; j < h.samples; j++) chunk += `${series}{datname="db${d}"} ${pick(h.row(j, d))} ${(h.start + j * h.stepSeconds * 1000) / 1000}\n`;
      await write(chunk);
    }
  }
  await write("# EOF\n");
  await new Promise<void>((resolve) => out.end(resolve));
}

export async function startPrometheus(h: DatabaseHistory, log: (line: string) => void): Promise<Prometheus> {
  const dir = await mkdtemp(join(tmpdir(), "pglens-bench-prometheus-"));
  const input = join(dir, "history.om");
  const data = join(dir, "data");
  log("writing the history as OpenMetrics...");
  await writeOpenMetrics(input, h);
  log("promtool tsdb create-blocks-from openmetrics...");
  const built = spawnSync("promtool", ["tsdb", "create-blocks-from", "openmetrics", "-q", input, data], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`promtool failed: ${built.stderr}`);
  await writeFile(join(dir, "prometheus.yml"), "global: {}\n");
  const port = await freePort();
  const server = spawn(
    "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${data}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--storage.tsdb.retention.time=100y",
      "--log.level=error",
    ],
    { stdio: "ignore" },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 600) throw new Error("Prometheus did not become ready in 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`Prometheus ${url} is serving the history`);
  return {
    async time(query, start, end, step) {
      const params = new URLSearchParams({ query, start: String(start / 1000), end: String(end / 1000), step: String(step) });
      const t = performance.now();
      const res = await fetch(`${url}/api/v1/query_range?${params}`);
      const body = (await res.json()) as { status: string; error?: string; data?: { result: unknown[] } };
      if (body.status !== "success") throw new Error(`PromQL ${query}: ${body.error}`);
      if (!body.data?.result.length) throw new Error(`PromQL ${query}: no series`);
      return performance.now() - t;
    },
    async stop() {
      server.kill();
      await new Promise((r) => server.once("exit", r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
