/**
 * Sending a message. HTTP works everywhere (fetch): 10 s timeout, redirects refused rather than followed,
 * the destination checked against the outbound guard at send time too. Email needs raw TCP, which only the
 * Node shell provides (smtp.ts); on Workers an email channel reports that it cannot send from there.
 */
import { VERSION } from "../version.ts";
import type { Message, OpenChannel } from "./payloads.ts";
import { type Resolve, checkOutboundHost, checkOutboundUrl } from "./outbound-guard.ts";

/** Sends an email, connecting to `address` (the SMTP host's address the outbound guard checked, when known). */
export type EmailSender = (channel: OpenChannel, message: Extract<Message, { transport: "email" }>, address?: string) => Promise<void>;

/** fetch that connects only to addresses the outbound guard accepts, checked in the lookup it connects with. */
export type GuardedFetch = (url: string, init: RequestInit, denyPrivate: boolean) => Promise<Response>;

export interface Transports {
  /** Absent where raw TCP is unavailable (Workers). */
  email?: EmailSender;
  /** Absent: the runtime's fetch (Workers, which resolve no names here and reach no private network). */
  fetch?: GuardedFetch;
  /** How host names are looked up before sending; absent: the runtime's resolver, if any. */
  resolve?: Resolve;
}

export class DeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DeliveryError";
  }
}

const HTTP_TIMEOUT_MS = 10_000;

/** fetch refuses URLs with user info: send it as basic auth instead, unless the channel sets its own. */
function withoutUserInfo(url: URL, headers: Record<string, string>): { url: string; headers: Record<string, string> } {
  if (!url.username && !url.password) return { url: url.toString(), headers };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = url.password = "";
  const hasAuth = Object.keys(headers).some((h) => h.toLowerCase() === "authorization");
  return { url: url.toString(), headers: hasAuth ? headers : { ...headers, authorization: `Basic ${btoa(credentials)}` } };
}

async function sendHttp(m: Extract<Message, { transport: "http" }>, transports: Transports, denyPrivate: boolean): Promise<void> {
  const { url, headers } = withoutUserInfo(await checkOutboundUrl(m.url, "destination", denyPrivate, transports.resolve), m.headers);
  const send: GuardedFetch = transports.fetch ?? ((u, init) => fetch(u, init));
  let res: Response;
  try {
    res = await send(url, { method: m.method, headers, body: m.body, redirect: "manual", signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) }, denyPrivate);
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } };
    const why = e.cause?.code ?? e.cause?.errors?.[0]?.code ?? e.cause?.message ?? e.message;
    throw new DeliveryError(e.name === "TimeoutError" ? `no answer within ${HTTP_TIMEOUT_MS / 1000} s` : `could not reach it: ${why}`);
  }
  // The body is never read: echoing it would let whoever may point a channel read any page it can reach.
  await res.body?.cancel().catch(() => {});
  const status = `${res.status}${res.statusText ? ` ${res.statusText}` : ""}`;
  if (res.status >= 300 && res.status < 400) throw new DeliveryError(`it answered ${status} (a redirect), which pglens does not follow`);
  if (!res.ok) throw new DeliveryError(`it answered ${status}`);
}

export async function send(channel: OpenChannel, message: Message, transports: Transports, denyPrivate: boolean): Promise<void> {
  if (message.transport === "http") return sendHttp(message, transports, denyPrivate);
  if (!transports.email)
    throw new DeliveryError("email cannot be sent from this runtime (Cloudflare Workers has no SMTP); run `pglens alerter` on Node for email channels");
  if (message.to.length === 0) throw new DeliveryError("no enabled recipients");
  const [address] = await checkOutboundHost(channel.smtp!.host, "smtp_host", denyPrivate, transports.resolve);
  await transports.email(channel, message, address);
}

/**
 * The message with the headers every webhook request carries: who sends it, and the notice's delivery id (the
 * same on every retry), by which a receiver can drop the duplicate a sender killed mid-send may cause.
 */
export function withDeliveryId(message: Message, deliveryId: string): Message {
  if (message.transport !== "http") return message;
  return { ...message, headers: { ...message.headers, "user-agent": `pglens/${VERSION}`, "x-pglens-delivery-id": deliveryId } };
}
