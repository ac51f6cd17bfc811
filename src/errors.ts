/** Domain errors, independent of HTTP: the REST layer answers 400 / 404, the MCP tools an error result. */

/** The caller asked for something invalid; the message says what and how to fix it. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}

/** The caller named something that does not exist (or that it may not see). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotFoundError";
  }
}

/** A name or key that must be unique is already taken. */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConflictError";
  }
}

/** The thing exists, and the caller may not use it (where the specification wants 403 rather than 404). */
export class ForbiddenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ForbiddenError";
  }
}

/** The caller asked again too soon; it may ask again after `retryAfterSeconds`. */
export class TooSoonError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "TooSoonError";
  }
}
