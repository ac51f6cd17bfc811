/**
 * A local stand-in for Neon's hosted proxy, so the real @neondatabase/serverless driver can be tested
 * against a real local Postgres. Two halves:
 * - a WebSocket relay (`/v2?address=host:port`) that pipes the Postgres wire protocol to a TCP socket;
 * - an SQL-over-HTTP endpoint (`POST /sql`) that runs `{query, params}` or `{queries: [...]}` with node-postgres
 *   and answers in Neon's JSON shape (text values, field type OIDs), errors as 400 `{message, code}`.
 * Test code only: it exists because Neon's proxy cannot run here.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { WebSocketServer } from "ws";
import { outliveClientKeepAlive } from "./support/node-server.ts";

export interface NeonProxy {
  fetchEndpoint: string;
  wsProxy: string;
  close(): Promise<void>;
}

interface HttpQuery {
  query: string;
  params?: unknown[];
}

const rawText = { getTypeParser: () => (value: string) => value };

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function runOne(client: pg.Client, q: HttpQuery) {
  const result = await client.query({ text: q.query, values: q.params ?? [], rowMode: "array", types: rawText });
  return {
    command: result.command,
    rowCount: result.rowCount,
    fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
    rows: result.rows,
  };
}

async function handleSql(req: IncomingMessage): Promise<unknown> {
  const connectionString = req.headers["neon-connection-string"];
  if (typeof connectionString !== "string") throw Object.assign(new Error("missing Neon-Connection-String"), { code: "08000" });
  const body = (await readJson(req)) as HttpQuery | { queries: HttpQuery[] };
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    if (!("queries" in body)) return await runOne(client, body);
    const readOnly = req.headers["neon-batch-read-only"] === "true";
    await client.query(readOnly ? "BEGIN READ ONLY" : "BEGIN");
    try {
      const results = [];
      for (const q of body.queries) results.push(await runOne(client, q));
      await client.query("COMMIT");
      return { results };
    } catch (err) {
      await client.query("ROLLBACK");
      throw err;
    }
  } finally {
    await client.end();
  }
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

export async function startNeonProxy(): Promise<NeonProxy> {
  const http = createServer((req, res) => {
    handleSql(req).then(
      (body) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      },
      (err: Error & { code?: string }) => {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: err.message, code: err.code }));
      },
    );
  });
  const relay = createServer();
  const wss = new WebSocketServer({ server: relay });
  wss.on("connection", (socket, req) => {
    const address = new URL(req.url ?? "", "http://relay").searchParams.get("address") ?? "";
    const [host, port] = address.split(":");
    const tcp = connect(Number(port), host);
    tcp.on("data", (data) => socket.send(data));
    tcp.on("close", () => socket.close());
    tcp.on("error", () => socket.close());
    socket.on("message", (data) => tcp.write(data as Buffer));
    socket.on("close", () => tcp.destroy());
  });
  outliveClientKeepAlive(http);
  const [httpPort, relayPort] = await Promise.all([listen(http), listen(relay)]);
  return {
    fetchEndpoint: `http://127.0.0.1:${httpPort}/sql`,
    wsProxy: `127.0.0.1:${relayPort}/v2`,
    async close() {
      for (const client of wss.clients) client.terminate();
      http.closeAllConnections();
      await Promise.all([new Promise((r) => http.close(r)), new Promise((r) => wss.close(() => relay.close(r)))]);
    },
  };
}
