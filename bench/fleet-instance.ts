/**
 * One collector instance of `npm run bench:fleet`, in a process of its own: collects one whole round from the
 * datastore at argv[2] and prints, as JSON on stdout, the CPU time this process spent in it (user + system)
 * and what it collected.
 */
import { openPg } from "../drivers/pg.ts";
import { collectDue } from "../src/collector/collect.ts";
import { resolveConfig } from "../src/config.ts";
import { createLogger } from "../src/log.ts";
import { TEST_SECRET } from "../test/support/monitored.ts";

const db = openPg(process.argv[2], { max: 8 });
const config = resolveConfig({}, { PGLENS_SECRET: TEST_SECRET });
await db.query("SELECT 1"); // connected before the clock starts
const cpu = process.cpuUsage();
const started = performance.now();
const round = await collectDue(db, config, createLogger("error"), { maintenance: false });
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({
    cpuMs: (used.user + used.system) / 1000,
    wallMs: performance.now() - started,
    servers: [...new Set(round.outcomes.map((o) => o.connectionId))],
    rows: round.outcomes.reduce((n, o) => n + o.rows, 0),
    failed: round.outcomes.filter((o) => o.status === "error").length + round.unreachable.length,
    probes: Object.fromEntries(
      [...new Set(round.outcomes.map((o) => o.probe))].map((p) => [p, round.outcomes.filter((o) => o.probe === p).reduce((n, o) => n + o.rows, 0)]),
    ),
  })}\n`,
);
await db.close();
