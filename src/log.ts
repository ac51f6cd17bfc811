/** Structured logging: one JSON object per line on stdout (Node) or the Workers log stream. */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;
export type LogSink = (line: string) => void;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(level: LogLevel = "info", sink: LogSink = (line) => console.log(line)): Logger {
  const emit =
    (at: LogLevel) =>
    (msg: string, fields: LogFields = {}) => {
      if (RANK[at] < RANK[level]) return;
      sink(JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...fields }));
    };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
