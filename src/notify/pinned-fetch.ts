/**
 * Node only: fetch whose connections go to an address the outbound guard accepted in the very lookup the
 * connection uses. A name checked in one lookup and connected to after a second could answer differently the
 * second time (DNS rebinding); here there is no second lookup.
 */
import type { LookupAddress } from "node:dns";
import { Agent, fetch as undiciFetch } from "undici";
import { type Resolve, refusedAddress } from "./outbound-guard.ts";
import type { GuardedFetch } from "./transports.ts";

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(resolve: Resolve, denyPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    resolve(hostname).then(
      (addresses) => {
        if (!addresses.length) return callback(Object.assign(new Error(`cannot resolve ${hostname}`), { code: "ENOTFOUND" }), []);
        for (const address of addresses) {
          const why = refusedAddress(address, denyPrivate);
          if (why) return callback(new Error(`refused: ${hostname} resolves to ${why}`), []);
        }
        const all = addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
        if (options.all) callback(null, all);
        else callback(null, all[0].address, all[0].family);
      },
      (err: Error) => callback(err, []),
    );
  };
}

/** A fetch for notifications, one connection pool per setting of deny_private_networks. */
export function pinnedFetch(resolve: Resolve): GuardedFetch {
  const agents = new Map<boolean, Agent>();
  return (url, init, denyPrivate) => {
    let agent = agents.get(denyPrivate);
    if (!agent) agents.set(denyPrivate, (agent = new Agent({ connect: { lookup: guardedLookup(resolve, denyPrivate) } })));
    return undiciFetch(url, { ...init, dispatcher: agent } as never) as unknown as Promise<Response>;
  };
}
