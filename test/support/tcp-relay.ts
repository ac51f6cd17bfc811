/**
 * A TCP relay to a local port that, unlike Miniflare's local Hyperdrive proxy, handles a target that refuses
 * connections: it closes the client's socket instead of throwing in the test process. Put between Miniflare's
 * Hyperdrive and a server the test stops.
 */
import { connect, createServer, type Socket } from "node:net";

export interface TcpRelay {
  port: number;
  close(): Promise<void>;
}

export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const target = connect({ host: "127.0.0.1", port: targetPort });
    for (const s of [client, target]) {
      sockets.add(s);
      s.on("error", () => {
        client.destroy();
        target.destroy();
      });
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(target).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
