/**
 * Where pglens may send notifications. Link-local addresses (cloud metadata lives at 169.254.169.254),
 * `0.0.0.0`/`::` and the like are always refused; loopback and private networks are allowed unless
 * `notifications.deny_private_networks` is set. Host names are resolved and every address checked (on
 * Workers, which cannot resolve names, only literal addresses are checked; Workers cannot reach private
 * networks anyway).
 */
import ipaddr from "ipaddr.js";
import { InputError } from "../errors.ts";

const ALWAYS_REFUSED = new Set(["linkLocal", "unspecified", "broadcast", "multicast", "reserved"]);
const PRIVATE = new Set(["private", "loopback", "uniqueLocal", "carrierGradeNat"]);

/** Why an address is refused, or null when it may be reached. */
export function refusedAddress(address: string, denyPrivate: boolean): string | null {
  if (!ipaddr.isValid(address)) return null;
  const range = ipaddr.process(address).range();
  if (ALWAYS_REFUSED.has(range)) return `${address} is a ${range} address`;
  if (denyPrivate && PRIVATE.has(range)) return `${address} is a ${range} address and notifications.deny_private_networks is set`;
  return null;
}

type Resolve = (host: string) => Promise<string[]>;

const UNRESOLVABLE = new Set(["ENOTFOUND", "EAI_AGAIN", "ENODATA", "EAI_NONAME"]);

async function nodeResolve(host: string): Promise<string[]> {
  let lookup: typeof import("node:dns/promises").lookup;
  try {
    ({ lookup } = await import("node:dns/promises"));
  } catch {
    return []; // no resolver in this runtime (Workers): literal addresses are still checked
  }
  try {
    return (await lookup(host, { all: true })).map((a) => a.address);
  } catch (err) {
    const code = (err as { code?: string }).code ?? "";
    if (UNRESOLVABLE.has(code)) throw new InputError(`cannot resolve ${host} (${code})`);
    return []; // a runtime whose resolver is a stub
  }
}

/** Throws InputError (`what` names the field) when `host` is, or resolves to, a refused address. */
export async function checkOutboundHost(host: string, what: string, denyPrivate: boolean, resolve: Resolve = nodeResolve): Promise<void> {
  const bare = host.replace(/^\[|\]$/g, "");
  const addresses = ipaddr.isValid(bare)
    ? [bare]
    : await resolve(bare).catch((err: Error) => {
        throw new InputError(`${what}: ${err.message}`);
      });
  for (const address of addresses) {
    const why = refusedAddress(address, denyPrivate);
    if (why) throw new InputError(`${what}: refused: ${host === address ? "" : `${host} resolves to `}${why}`);
  }
}

/** The URL parsed, http(s) only, its host checked. */
export async function checkOutboundUrl(url: string, what: string, denyPrivate: boolean): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError(`${what}: not a URL`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new InputError(`${what}: only http and https URLs are allowed`);
  await checkOutboundHost(parsed.hostname, what, denyPrivate);
  return parsed;
}
