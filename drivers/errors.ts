/** Thrown when the datastore cannot be reached; the HTTP layer turns it into a 503. */
export class DatastoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DatastoreUnavailableError";
  }
}

const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "EAI_AGAIN"]);
// SQLSTATE class 08 (connection exception) and the shutdown/startup codes of class 57; not 08P01, the protocol
// violation a statement given the wrong number of parameters raises: that is a bug to report, not an outage.
const UNAVAILABLE_SQLSTATE = /^(08(?!P01)...|57P01|57P02|57P03)$/;
const UNREACHABLE_MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "connect ECONNREFUSED",
  "fetch failed",
  "WebSocket",
  "Client has encountered a connection error",
  "Connection ended unexpectedly",
];

export function isUnavailable(err: unknown): boolean {
  if (err instanceof DatastoreUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  if (err instanceof AggregateError && err.errors.some(isUnavailable)) return true;
  if (err.cause && err.cause !== err && isUnavailable(err.cause)) return true;
  return UNREACHABLE_MESSAGES.some((m) => err.message.includes(m));
}

/** Rethrows connection failures as DatastoreUnavailableError and leaves SQL errors as they are. */
export function classify(err: unknown): unknown {
  if (err instanceof DatastoreUnavailableError || !isUnavailable(err)) return err;
  const detail = err instanceof Error ? err.message || (err as { code?: string }).code || err.name : String(err);
  return new DatastoreUnavailableError(`datastore unreachable: ${detail}`, { cause: err });
}
