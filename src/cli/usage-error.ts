/** Wrong usage of the `pglens` command: exit code 2 with the message. */
export class UsageError extends Error {}
