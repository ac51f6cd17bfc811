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

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 addresses an IPv6 address carries and that a packet to it may reach: IPv4-compatible (::a.b.c.d),
 * SIIT (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo
 * (2001::/32: its server and its obfuscated client). IPv4-mapped addresses ipaddr.process turns into IPv4 itself.
 */
export function embeddedIPv4(address: ipaddr.IPv6): string[] {
  const p = address.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 6) && p[6] !== 0) return [v4(p[6], p[7])];
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return [v4(p[6], p[7])];
  if (p[0] === 0x64 && p[1] === 0xff9b) return [v4(p[6], p[7])];
  if (p[0] === 0x2002) return [v4(p[1], p[2])];
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
  return [];
}

function refusedRange(shown: string, range: string, denyPrivate: boolean): string | null {
  if (ALWAYS_REFUSED.has(range)) return `${shown} a ${range} address`;
  if (denyPrivate && PRIVATE.has(range)) return `${shown} a ${range} address and notifications.deny_private_networks is set`;
  return null;
}

/** Why an address is refused, or null when it may be reached. An IPv6 address is judged by the IPv4 it embeds too. */
export function refusedAddress(address: string, denyPrivate: boolean): string | null {
  if (!ipaddr.isValid(address)) return null;
  const parsed = ipaddr.process(address);
  const own = refusedRange(`${address} is`, parsed.range(), denyPrivate);
  if (own || parsed.kind() === "ipv4") return own;
  for (const inner of embeddedIPv4(parsed as ipaddr.IPv6)) {
    const why = refusedRange(`${address} embeds ${inner},`, ipaddr.parse(inner).range(), denyPrivate);
    if (why) return why;
  }
  return null;
}

export type Resolve = (host: string) => Promise<string[]>;

const UNRESOLVABLE = new Set(["ENOTFOUND", "EAI_AGAIN", "ENODATA", "EAI_NONAME"]);

export async function nodeResolve(host: string): Promise<string[]> {
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

/**
 * Throws InputError (`what` names the field) when `host` is, or resolves to, a refused address; else answers the
 * addresses checked (none where the runtime cannot resolve names), so the caller connects to one of them.
 */
export async function checkOutboundHost(host: string, what: string, denyPrivate: boolean, resolve: Resolve = nodeResolve): Promise<string[]> {
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
  return addresses;
}

/** The URL parsed, http(s) only, its host checked (`resolve`: how names are looked up; none: literal addresses only). */
export async function checkOutboundUrl(url: string, what: string, denyPrivate: boolean, resolve: Resolve = nodeResolve): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError(`${what}: not a URL`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new InputError(`${what}: only http and https URLs are allowed`);
  await checkOutboundHost(parsed.hostname, what, denyPrivate, resolve);
  return parsed;
}
