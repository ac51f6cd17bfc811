/**
 * Node shell: the client's address and scheme when pglens runs behind reverse proxies. Forwarded headers are
 * believed only from peers listed in `trusted_proxies` (addresses or CIDRs); anyone else could forge them.
 */
import { BlockList, isIP } from "node:net";

export interface ProxyTrust {
  /** The address login throttling keys on. */
  clientAddress(peer: string | undefined, forwardedFor: string | undefined): string;
  /** Whether the request reached the proxy over HTTPS (for the session cookie's Secure flag). */
  forwardedHttps(peer: string | undefined, forwardedProto: string | undefined): boolean;
}

const family = (address: string) => (isIP(address) === 6 ? "ipv6" : "ipv4");
const bare = (address: string) => address.replace(/^::ffff:(?=\d+\.)/, "");

export function proxyTrust(entries: readonly string[]): ProxyTrust {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split("/");
    if (!isIP(address) || (bits !== undefined && !/^\d{1,3}$/.test(bits)))
      throw new Error(`trusted_proxies: ${JSON.stringify(entry)} is not an IP address or CIDR`);
    if (bits === undefined) list.addAddress(address, family(address));
    else list.addSubnet(address, Number(bits), family(address));
  }
  const trusted = (address: string | undefined) => !!address && isIP(bare(address)) !== 0 && list.check(bare(address), family(bare(address)));
  return {
    clientAddress(peer, forwardedFor) {
      if (!trusted(peer) || !forwardedFor) return peer ?? "unknown";
      // Walk back from the nearest hop; the first address that is not one of our proxies is the client.
      const hops = forwardedFor
        .split(",")
        .map((h) => h.trim())
        .filter(Boolean);
      for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i])) return bare(hops[i]);
      return hops[0] ?? peer!;
    },
    forwardedHttps(peer, forwardedProto) {
      return trusted(peer) && forwardedProto?.split(",")[0].trim().toLowerCase() === "https";
    },
  };
}
