/** Node only: how notifications leave a Node process (SMTP, and fetch pinned to the addresses the guard checked). */
import { type Resolve, nodeResolve } from "./outbound-guard.ts";
import { pinnedFetch } from "./pinned-fetch.ts";
import { sendEmail } from "./smtp.ts";
import type { Transports } from "./transports.ts";

export function nodeTransports(resolve: Resolve = nodeResolve): Transports {
  return { email: sendEmail, fetch: pinnedFetch(resolve), resolve };
}
