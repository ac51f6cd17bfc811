/**
 * A tiny stand-in for a hostile PostgreSQL server: it refuses TLS, asks every client for its password in
 * clear text and records what it receives, then ends the session. It shows whether pglens sends a stored
 * password to an endpoint it should not.
 */
import { createServer, type Socket } from "node:net";

export interface FakePostgres {
  port: number;
  /** Password messages received, in order. */
  passwords: string[];
  /** Sessions opened (startup messages seen). */
  sessions: number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;

function errorResponse(message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SFATAL\0C28P01\0M${message}\0`), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

export async function startFakePostgres(): Promise<FakePostgres> {
  const state = { passwords: [] as string[], sessions: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffer = Buffer.alloc(0);
    let started = false;
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          if (code === SSL_REQUEST) {
            socket.write("N");
            continue;
          }
          started = true;
          state.sessions++;
          socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])); // AuthenticationCleartextPassword
          continue;
        }
        if (buffer.length < 5) return;
        const type = String.fromCharCode(buffer[0]);
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) return;
        const body = buffer.subarray(5, length + 1);
        buffer = buffer.subarray(length + 1);
        if (type === "p") {
          state.passwords.push(body.toString("utf8").replace(/\0$/, ""));
          socket.end(errorResponse("password authentication failed"));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    get passwords() {
      return state.passwords;
    },
    get sessions() {
      return state.sessions;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
