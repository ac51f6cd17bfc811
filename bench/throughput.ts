/**
 * bench:metrics' throughput part: requests per second of the 1-hour metrics query under 32 concurrent
 * clients, next to a minimal node:http server that runs the same data SQL and returns its rows as JSON
 * (no authentication, no pipeline): the cost of everything pglens adds around the datastore.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Queryable } from "../drivers/types.ts";

const CLIENTS = 32;
const SECONDS = 5;

/** Completed requests per second of `CLIENTS` loops fetching `url` for `SECONDS`. */
export async function requestsPerSecond(url: string, headers: Record<string, string> = {}): Promise<number> {
  let done = 0;
  const until = Date.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const res = await fetch(url, { headers });
        if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/** A bare server answering every request with the rows of one fixed statement, its plan kept as the service keeps its own. */
export async function minimalServer(db: Queryable, sql: string, params: () => unknown[]): Promise<{ url: string; close(): void }> {
  const server = createServer(async (_req, res) => {
    const rows = await db.query(sql, params(), { reusePlan: true });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(rows));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() };
}
