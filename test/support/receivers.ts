/** Real receivers for notification tests: an HTTP server that records requests, and an SMTP server. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { outliveClientKeepAlive } from "./node-server.ts";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** An HTTP server; `answer` decides each response (default 200 "ok"). */
export async function startHttpReceiver(answer: (req: ReceivedRequest, n: number, res: ServerResponse) => void = (_r, _n, res) => res.end("ok")) {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const got = { method: req.method!, path: req.url!, headers: req.headers, body };
      requests.push(got);
      answer(got, requests.length, res);
    });
  });
  outliveClientKeepAlive(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  user?: string;
}

/** An SMTP server without TLS that accepts one login (if given) and records every message. */
export async function startSmtpReceiver(login?: { user: string; pass: string }) {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: !login,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, done) {
      if (login && auth.username === login.user && auth.password === login.pass) return done(null, { user: auth.username });
      done(new Error("invalid login"));
    },
    onData(stream, session, done) {
      let raw = "";
      stream.on("data", (d) => (raw += d));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          user: session.user as string | undefined,
        });
        done();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, close: () => new Promise<void>((r) => server.close(() => r())) };
}
