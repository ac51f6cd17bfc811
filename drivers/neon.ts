import { neon, neonConfig, Pool, types as neonTypes } from "@neondatabase/serverless";
import { classify } from "./errors.ts";
import { contractTypes, poolDriver } from "./pool-driver.ts";
import type { Driver, NeonEndpoints } from "./types.ts";

export interface NeonOptions extends NeonEndpoints {
  /** Node 20 has no global WebSocket: pass the `ws` package's constructor there. Workers have one. */
  webSocketConstructor?: unknown;
  connectTimeoutMs?: number;
}

function configure(options: NeonOptions): void {
  if (options.webSocketConstructor) neonConfig.webSocketConstructor = options.webSocketConstructor as typeof WebSocket;
  if (options.fetchEndpoint) neonConfig.fetchEndpoint = options.fetchEndpoint;
  if (options.wsProxy) {
    neonConfig.wsProxy = options.wsProxy;
    // A self-hosted proxy speaks to a stock Postgres, whose SCRAM handshake cannot be pipelined.
    neonConfig.pipelineConnect = false;
  }
  if (options.secureWebSocket !== undefined) neonConfig.useSecureWebSocket = options.secureWebSocket;
}

function wsPool(url: string, options: NeonOptions): Pool {
  return new Pool({
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    types: contractTypes(neonTypes),
  });
}

/** Neon over WebSockets: a pg-compatible pool, sessions and interactive transactions. */
export function openNeonWs(url: string, options: NeonOptions = {}): Driver {
  configure(options);
  return poolDriver("neon-ws", wsPool(url, options));
}

/**
 * Neon's SQL-over-HTTP: one round trip per statement, nothing to keep open. HTTP cannot hold an
 * interactive transaction, so `transaction()` uses a WebSocket pool opened on first use, as Neon advises.
 */
export function openNeonHttp(url: string, options: NeonOptions = {}): Driver {
  configure(options);
  const sql = neon(url);
  const types = contractTypes(neonTypes); // the HTTP path reads parsers per query, not per client
  let txDriver: Driver | undefined;
  const transactions = () => (txDriver ??= poolDriver("neon-ws", wsPool(url, options)));
  return {
    kind: "neon-http",
    async query(text, params) {
      try {
        return (await sql.query(text, params ? [...params] : [], { types })) as never;
      } catch (err) {
        throw classify(err);
      }
    },
    transaction: (work) => transactions().transaction(work),
    close: async () => {
      await txDriver?.close();
    },
  };
}
