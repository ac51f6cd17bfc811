/** Serves an app over real HTTP with @hono/node-server, as `npm start` does. */
import { serve } from "@hono/node-server";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Clients (undici's fetch, the LLM SDKs) drop an idle keep-alive connection after about 4 s; Node's server after 5 s.
 * On a loaded machine the server's timer could win just as the client sent its next request on that socket
 * ("other side closed", ECONNRESET): the tests' servers wait longer, so the client always closes first.
 */
export function outliveClientKeepAlive(server: Server): void {
  server.keepAliveTimeout = 60_000;
}

export async function serveOnFreePort(fetch: (req: Request) => Response | Promise<Response>): Promise<{ url: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
      outliveClientKeepAlive(server as Server);
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
