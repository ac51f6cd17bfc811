/**
 * pglens's HTTP API alone (no collector, alerter or notifier) in a process of its own, as a deployment serves it,
 * over the datastore at argv[2]: prints its URL on stdout, then serves until killed. bench:metrics times its
 * requests here, not in the benchmark's own process, whose bare scans leave hundreds of megabytes for the garbage
 * collector (Prometheus, the other side, runs in its own process too).
 */
import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import { openPg } from "../drivers/pg.ts";
import { createApp } from "../src/app.ts";
import { resolveConfig } from "../src/config.ts";
import { createLogger } from "../src/log.ts";

const db = openPg(process.argv[2]);
const app = createApp({ config: resolveConfig({}, {}), log: createLogger("error"), datastore: { open: () => db } });
serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => process.stdout.write(`http://127.0.0.1:${info.port}\n`));
