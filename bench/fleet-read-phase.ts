/**
 * The read phase of `npm run bench:fleet`: a collector round writes to the primary while API reads of metrics,
 * alerts and server info arrive at a steady rate, served once from two streaming standbys (datastore.read_urls)
 * and once from the primary alone. Prints the round's write rate beside a round without reads, the reads'
 * rate and latency, and which server answered: the statements that read samples or alerts on the primary must be
 * none when the replicas are current (the rest on the primary checks who the reader is and what they may read).
 */
import { openPg } from "../drivers/pg.ts";
import type { Driver } from "../drivers/types.ts";
import { resolveConfig } from "../src/config.ts";
import { openReadReplicas } from "../src/http/read-db.ts";
import { testApp } from "../test/support/app.ts";
import { userWithToken } from "../test/support/auth.ts";
import { counting } from "../test/support/counting-driver.ts";
import { TEST_SECRET } from "../test/support/monitored.ts";

/** Reading samples (metrics.*) or alerts: what replicas are for. */
const DATA_READ = /\bmetrics\.|\bFROM alerts\b/;
/** A steady read load, the same in every case, so that write rates compare (BENCH_READS_PER_SECOND). */
const READS_PER_SECOND = Number(process.env.BENCH_READS_PER_SECOND ?? 10);
/** Requests not yet answered beyond this are skipped, not queued: a slow datastore shows as skipped reads. */
const MAX_IN_FLIGHT = 16;

export interface WriteRound {
  seconds: number;
  rows: number;
}

interface ReadCase {
  label: string;
  round: WriteRound;
  requests: number;
  failed: number;
  skipped: number;
  /** Milliseconds, sorted. */
  latencies: number[];
  firstFailure?: string;
  onPrimary: number;
  dataOnPrimary: number;
  onReplicas: number[];
}

/** Runs `write` (one collector round) three times: alone, with readers on the replicas, with readers on the primary. */
export async function readPhase(options: {
  primaryUrl: string;
  replicaUrls: string[];
  connectionIds: number[];
  write: () => Promise<WriteRound>;
  progress: (line: string) => void;
}): Promise<string[]> {
  const { primaryUrl, replicaUrls, connectionIds, write, progress } = options;
  const primary = openPg(primaryUrl);
  const { token } = await userWithToken(primary, `bench-reader-${Date.now()}`, { superuser: true });
  try {
    progress("read phase: a round with no readers...");
    const alone = await write();
    const cases: ReadCase[] = [];
    for (const urls of [replicaUrls, []]) {
      progress(`read phase: a round with ${READS_PER_SECOND} API reads per second on ${urls.length ? `${urls.length} replicas` : "the primary"}...`);
      cases.push(await readWhileWriting(primary, primaryUrl, urls, token, connectionIds, write));
    }
    const rate = (r: WriteRound) => r.rows / r.seconds;
    const rows = (r: WriteRound) => Math.round(rate(r)).toLocaleString("en-US");
    const at = (xs: number[], q: number) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor(q * xs.length))].toFixed(0) : "-");
    return [
      "| API reads | round s | rows written per s | vs no reads | reads answered per s (failed, skipped) | read ms p50 / p95 | statements on the primary (reading samples or alerts) | statements on each replica |",
      "|---|---:|---:|---:|---:|---:|---:|---:|",
      `| none | ${alone.seconds.toFixed(1)} | ${rows(alone)} | 1.00 | | | | |`,
      ...cases.map(
        (c) =>
          `| ${c.label} | ${c.round.seconds.toFixed(1)} | ${rows(c.round)} | ${(rate(c.round) / rate(alone)).toFixed(2)} | ${(c.requests / c.round.seconds).toFixed(1)} (${c.failed}, ${c.skipped}) | ${at(c.latencies, 0.5)} / ${at(c.latencies, 0.95)} | ${c.onPrimary.toLocaleString("en-US")} (${c.dataOnPrimary}) | ${c.onReplicas.map((n) => n.toLocaleString("en-US")).join(" / ") || "-"} |`,
      ),
      ...cases.flatMap((c) => (c.firstFailure ? ["", `first failed read (${c.label}): ${c.firstFailure}`] : [])),
    ];
  } finally {
    await primary.close();
  }
}

async function readWhileWriting(
  primary: Driver,
  primaryUrl: string,
  replicaUrls: string[],
  token: string,
  connectionIds: number[],
  write: () => Promise<WriteRound>,
): Promise<ReadCase> {
  const config = resolveConfig({ datastore: { url: primaryUrl, read_urls: replicaUrls } }, { PGLENS_SECRET: TEST_SECRET });
  const onPrimary = counting(primary);
  const replicaStatements: string[][] = [];
  const replicas = openReadReplicas(config, onPrimary.driver.kind, (url) => {
    const replica = counting(openPg(url));
    replicaStatements.push(replica.statements);
    return replica.driver;
  });
  // The service's own settings (a caller cached for 5 s), not the tests' (no cache).
  const { app } = testApp(onPrimary.driver, {
    config: { datastore: config.datastore, auth: config.auth },
    deps: { datastore: { open: () => onPrimary.driver, replicas } },
  });
  const paths = connectionIds.flatMap((id) => [
    `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${id}&metrics=xact_commit_per_sec,blk_read_time_pct,active_time_sessions&time_range=1h`,
    `/api/v1/alerts?connection_id=${id}`,
    `/api/v1/server-info/${id}`,
  ]);
  let requests = 0;
  let failed = 0;
  let skipped = 0;
  let inFlight = 0;
  const latencies: number[] = [];
  let firstFailure: string | undefined;
  const read = async (path: string) => {
    const started = performance.now();
    inFlight++;
    try {
      const res = await app.request(path, { headers: { authorization: `Bearer ${token}` } });
      const body = await res.text();
      if (res.status !== 200) {
        failed++;
        firstFailure ??= `${path}: ${res.status} ${body.slice(0, 200)}`;
      }
    } catch (err) {
      failed++;
      firstFailure ??= `${path}: ${(err as Error).message}`;
    } finally {
      inFlight--;
      requests++;
      latencies.push(performance.now() - started);
    }
  };
  let next = 0;
  const pace = setInterval(() => {
    if (inFlight >= MAX_IN_FLIGHT) skipped++;
    else void read(paths[next++ % paths.length]);
  }, 1000 / READS_PER_SECOND);
  let round: WriteRound;
  try {
    round = await write();
  } finally {
    clearInterval(pace);
    while (inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    await replicas?.set.close();
  }
  latencies.sort((a, b) => a - b);
  return {
    label: `${READS_PER_SECOND} per s, on ${replicaUrls.length ? `${replicaUrls.length} replicas` : "the primary"}`,
    round,
    requests,
    failed,
    skipped,
    latencies,
    firstFailure,
    onPrimary: onPrimary.statements.length,
    dataOnPrimary: onPrimary.statements.filter((sql) => DATA_READ.test(sql)).length,
    onReplicas: replicaStatements.map((s) => s.length),
  };
}
