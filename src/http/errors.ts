/** Every REST error is `{"error": "<message>"}`; this module decides the status and the message. */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isUnavailable } from "../../drivers/errors.ts";
import { SecretUnavailableError } from "../auth/secret-box.ts";
import { MonitoredServerError } from "../monitored/client.ts";
import { LiveBusyError } from "../monitored/live-slots.ts";
import { LlmProviderError } from "../llm/provider-error.ts";
import { TokenBudgetError } from "../llm/usage.ts";
import { ConflictError, ForbiddenError, InputError, NotFoundError, TooSoonError } from "../errors.ts";
import type { AppEnv } from "./context.ts";

/** An error whose message is meant for the caller. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const notFound = (message: string) => new ApiError(404, message);

export function errorResponse(c: Context, status: ContentfulStatusCode, message: string, headers?: Record<string, string>) {
  return c.json({ error: message }, status, headers);
}

export function handleError(err: Error, c: Context<AppEnv>) {
  if (err instanceof ApiError) return errorResponse(c, err.status, err.message, err.headers);
  if (err instanceof InputError) return errorResponse(c, 400, err.message);
  if (err instanceof NotFoundError) return errorResponse(c, 404, err.message);
  if (err instanceof ForbiddenError) return errorResponse(c, 403, err.message);
  if (err instanceof ConflictError) return errorResponse(c, 409, err.message);
  if (err instanceof TooSoonError) return errorResponse(c, 429, err.message, { "Retry-After": String(err.retryAfterSeconds) });
  if (err instanceof HTTPException) {
    const message = err.status === 400 && /json/i.test(err.message) ? "request body is not valid JSON" : err.message || "request failed";
    return errorResponse(c, err.status as ContentfulStatusCode, message);
  }
  const log = c.get("log");
  if (err instanceof MonitoredServerError) return errorResponse(c, 502, err.message);
  if (err instanceof LlmProviderError) {
    log?.warn("llm provider failed", { request_id: c.get("requestId"), provider: err.provider, error: err.message });
    return errorResponse(c, err.status, err.message);
  }
  if (err instanceof TokenBudgetError) return errorResponse(c, 429, err.message, { "Retry-After": String(err.retryAfterSeconds) });
  if (err instanceof LiveBusyError) return errorResponse(c, 429, err.message, { "Retry-After": String(err.retryAfterSeconds) });
  if (err instanceof SecretUnavailableError) {
    log?.error("stored secrets unavailable", { request_id: c.get("requestId"), error: err.message });
    return errorResponse(c, 503, err.message);
  }
  if (isUnavailable(err)) {
    log?.warn("datastore unavailable", { request_id: c.get("requestId"), error: err.message });
    return errorResponse(c, 503, "the datastore is unavailable; try again shortly");
  }
  log?.error("unhandled error", { request_id: c.get("requestId"), error: err.stack ?? String(err) });
  return errorResponse(c, 500, "internal server error");
}
