/** Serves an app over real HTTP with @hono/node-server, as `npm start` does. */
import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";

export async function serveOnFreePort(fetch: (req: Request) => Response | Promise<Response>): Promise<{ url: string; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
