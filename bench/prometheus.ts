/**
 * bench:metrics' comparison with Prometheus: when `prometheus` and `promtool` are on the PATH (Debian package
 * `prometheus`), the same pg_stat_database history is written as OpenMetrics, turned into TSDB blocks with
 * `promtool tsdb create-blocks-from openmetrics`, served by a Prometheus on a free port, and the PromQL
 * equivalent of each pglens request is timed through its HTTP API.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface DatabaseHistory {
  start: number;
  stepSeconds: number;
  samples: number;
  databases: number;
  /** The values of database `d` at sample `j`, as the pglens side loads them. */
  row(j: number, d: number): Record<string, number>;
  /** The row's values written as series (`pg_<column>`), by default numbackends, xact_commit and blk_read_time. */
  columns?: ReadonlyArray<readonly [string, "gauge" | "counter"]>;
}

const DEFAULT_COLUMNS = [
  ["numbackends", "gauge"],
  ["xact_commit", "counter"],
  ["blk_read_time", "counter"],
] as const;

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
  for (const [column, type] of h.columns ?? DEFAULT_COLUMNS) {
    const name = `pg_${column}`;
    await write(`# TYPE ${name} ${type}\n`);
    const series = type === "counter" ? `${name}_total` : name;
    for (let d = 0; d < h.databases; d++) {
      let chunk = "";
      for (let j = 0; j < h.samples; j++) chunk += `${series}{datname="db${d}"} ${h.row(j, d)[column]} ${(h.start + j * h.stepSeconds * 1000) / 1000}\n`;
      await write(chunk);
    }
  }
  await write("# EOF\n");
  await new Promise<void>((resolve) => out.end(resolve));
}

/** The history as TSDB blocks in `<dir>/data`, as `promtool tsdb create-blocks-from openmetrics` writes them. */
async function blocksOf(h: DatabaseHistory, log: (line: string) => void): Promise<{ dir: string; data: string }> {
  const dir = await mkdtemp(join(tmpdir(), "pglens-bench-prometheus-"));
  const input = join(dir, "history.om");
  const data = join(dir, "data");
  log("writing the history as OpenMetrics...");
  await writeOpenMetrics(input, h);
  log("promtool tsdb create-blocks-from openmetrics...");
  const built = spawnSync("promtool", ["tsdb", "create-blocks-from", "openmetrics", "-q", input, data], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(`promtool failed: ${built.stderr}`);
  await rm(input);
  await writeFile(join(dir, "prometheus.yml"), "global: {}\n");
  return { dir, data };
}

/** A Prometheus serving the blocks in `data`, once it answers ready. */
async function serveBlocks(dir: string, data: string): Promise<{ url: string; server: ChildProcess }> {
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
  return { url, server };
}

async function stopServer(server: ChildProcess, dir: string): Promise<void> {
  server.kill();
  await new Promise((r) => server.once("exit", r));
  await rm(dir, { recursive: true, force: true });
}

/**
 * The blocks in `data` (directories with a meta.json) and their bytes, files of every kind in them. A block that
 * compaction deletes while it is read is left out (the caller measures again until the count holds).
 */
async function blocksIn(data: string): Promise<{ blocks: number; bytes: number }> {
  let blocks = 0;
  let bytes = 0;
  for (const entry of await readdir(data, { withFileTypes: true })) {
    const block = join(data, entry.name);
    if (!entry.isDirectory()) continue;
    try {
      await stat(join(block, "meta.json"));
      let size = 0;
      for (const file of await readdir(block, { recursive: true, withFileTypes: true }))
        if (file.isFile()) size += (await stat(join(file.parentPath, file.name))).size;
      blocks++;
      bytes += size;
    } catch {
      // not a block, or deleted by a compaction meanwhile
    }
  }
  return { blocks, bytes };
}

/**
 * Prometheus's bytes per sample for the history: its blocks as promtool writes them (two hours each), then as
 * Prometheus keeps them once it has compacted them into longer blocks (it plans compactions every minute; the
 * blocks are measured once their number has fallen and held for 15 s, or after 3 minutes as they are).
 */
export async function prometheusBytesPerSample(
  h: DatabaseHistory,
  log: (line: string) => void,
): Promise<{ created: { blocks: number; perSample: number }; compacted: { blocks: number; perSample: number } }> {
  const samples = h.samples * h.databases * (h.columns ?? DEFAULT_COLUMNS).length;
  const { dir, data } = await blocksOf(h, log);
  const created = await blocksIn(data);
  const { server } = await serveBlocks(dir, data);
  log(`Prometheus is compacting ${created.blocks} blocks (up to 3 minutes)...`);
  let compacted = created;
  try {
    for (let since = Date.now(), started = Date.now(); Date.now() - started < 180_000; ) {
      await new Promise((r) => setTimeout(r, 2000));
      const now = await blocksIn(data);
      if (now.blocks !== compacted.blocks) since = Date.now();
      compacted = now;
      if (compacted.blocks < created.blocks && Date.now() - since > 15_000) break;
    }
  } finally {
    await stopServer(server, dir);
  }
  return {
    created: { blocks: created.blocks, perSample: created.bytes / samples },
    compacted: { blocks: compacted.blocks, perSample: compacted.bytes / samples },
  };
}

export async function startPrometheus(h: DatabaseHistory, log: (line: string) => void): Promise<Prometheus> {
  const { dir, data } = await blocksOf(h, log);
  const { url, server } = await serveBlocks(dir, data);
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
    stop: () => stopServer(server, dir),
  };
}
