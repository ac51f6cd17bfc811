/**
 * Commands that talk to a running pglens over its REST API, so nobody has to stop the server (the embedded
 * datastore belongs to it) or write JSON by hand: `pglens connection add|list|remove` and `pglens alerts`.
 * Where: --url, else PGLENS_URL, else http://127.0.0.1:$PORT (8080). Who: --token, else PGLENS_TOKEN.
 */
import { parseArgs } from "node:util";
import { printTable } from "./common.ts";
import { readPassword } from "./password-input.ts";
import { UsageError } from "./usage-error.ts";
import { parserOptions, usageError } from "./options.ts";

interface Server {
  url: string;
  token: string;
}

function serverOf(values: { url?: string; token?: string }): Server {
  const url = (values.url ?? process.env.PGLENS_URL ?? `http://127.0.0.1:${process.env.PORT || 8080}`).replace(/\/+$/, "");
  const token = values.token ?? process.env.PGLENS_TOKEN;
  if (!token) throw new UsageError("no token: set PGLENS_TOKEN (or --token) to an API token (`pglens token create --user NAME`)");
  return { url, token };
}

/** One API call; an error answer becomes the API's own message and exit 1. */
async function call<T>(server: Server, method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new Error(`cannot reach pglens at ${server.url} (${(err as Error).message}); is it running? (--url, PGLENS_URL)`);
  }
  const text = await res.text();
  if (!res.ok) {
    const message = (() => {
      try {
        return (JSON.parse(text) as { error?: string }).error ?? text;
      } catch {
        return text;
      }
    })();
    const error = new Error(`${message} (HTTP ${res.status} from ${method} ${path})`);
    throw res.status === 400 || res.status === 404 || res.status === 409 ? new UsageError(error.message) : error;
  }
  return (text ? JSON.parse(text) : undefined) as T;
}

interface Connection {
  id: number;
  name: string;
  host: string;
  port: number;
  database_name: string;
  username: string;
  is_monitored: boolean;
  connection_error: string | null;
}

export async function connectionCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action === "list") {
    const { values } = parseArgs({ args: rest, options: parserOptions("connection list") });
    const rows = await call<Connection[]>(serverOf(values), "GET", "/api/v1/connections");
    if (values.json) console.log(JSON.stringify(rows));
    else
      printTable(
        ["ID", "NAME", "ADDRESS", "DATABASE", "USER", "STATE"],
        rows.map((c) => [
          c.id,
          c.name,
          `${c.host}:${c.port}`,
          c.database_name,
          c.username,
          !c.is_monitored ? "not monitored" : c.connection_error ? `unreachable: ${c.connection_error}` : "monitored",
        ]),
      );
    return 0;
  }
  if (action === "add") {
    const { values } = parseArgs({ args: rest, options: parserOptions("connection add") });
    if (!values.name || !values.host || !values.user) throw usageError("connection add", "--name, --host and --user are required");
    const port = values.port === undefined ? 5432 : Number(values.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port: a port number (got ${JSON.stringify(values.port)})`);
    const server = serverOf(values);
    const password = values["no-password"] ? undefined : await readPassword({ file: values["password-file"] });
    const created = await call<Connection & { warning?: string }>(server, "POST", "/api/v1/connections", {
      name: values.name,
      host: values.host,
      port,
      database_name: values.database ?? "postgres",
      username: values.user,
      ...(password ? { password } : {}),
      ...(values.sslmode ? { sslmode: values.sslmode } : {}),
      ...(values.shared ? { is_shared: true } : {}),
    });
    if (values.json) console.log(JSON.stringify(created));
    else
      console.error(
        `added connection ${created.id} (${created.name}); the collector samples it from its next round${created.warning ? `\nwarning: ${created.warning}` : ""}`,
      );
    return 0;
  }
  if (action === "remove") {
    const { values, positionals } = parseArgs({ args: rest, options: parserOptions("connection remove"), allowPositionals: true });
    if (positionals.length !== 1 || !/^\d+$/.test(positionals[0]))
      throw usageError("connection remove", "give the connection's ID (pglens connection list shows them)");
    await call(serverOf(values), "DELETE", `/api/v1/connections/${positionals[0]}`);
    console.error(`removed connection ${positionals[0]} and its history`);
    return 0;
  }
  throw usageError("connection", `unknown connection command "${action}"`);
}

interface Alert {
  id: number;
  severity: string;
  status: string;
  title: string;
  server_name: string;
  triggered_at: string;
}

export async function alertsCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: parserOptions("alerts") });
  const { alerts } = await call<{ alerts: Alert[] }>(serverOf(values), "GET", "/api/v1/alerts?exclude_cleared=true&limit=200");
  const shown = alerts.filter((a) => a.status !== "pending");
  if (values.json) console.log(JSON.stringify(shown));
  else if (shown.length === 0) console.error("no open alerts on the servers this token can read");
  else
    printTable(
      ["ID", "SEVERITY", "STATUS", "SERVER", "SINCE", "TITLE"],
      shown.map((a) => [a.id, a.severity, a.status, a.server_name, a.triggered_at.replace("T", " ").slice(0, 19), a.title]),
    );
  return 0;
}
