/**
 * Sending a message. HTTP works everywhere (fetch): 10 s timeout, redirects refused rather than followed,
 * the destination checked against the outbound guard at send time too. Email needs raw TCP, which only the
 * Node shell provides (smtp.ts); on Workers an email channel reports that it cannot send from there.
 */
import type { Message, OpenChannel } from "./payloads.ts";
import { checkOutboundHost, checkOutboundUrl } from "./outbound-guard.ts";

export type EmailSender = (channel: OpenChannel, message: Extract<Message, { transport: "email" }>) => Promise<void>;

export interface Transports {
  /** Absent where raw TCP is unavailable (Workers). */
  email?: EmailSender;
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

async function sendHttp(m: Extract<Message, { transport: "http" }>, denyPrivate: boolean): Promise<void> {
  const { url, headers } = withoutUserInfo(await checkOutboundUrl(m.url, "destination", denyPrivate), m.headers);
  let res: Response;
  try {
    res = await fetch(url, { method: m.method, headers, body: m.body, redirect: "manual", signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
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
  if (message.transport === "http") return sendHttp(message, denyPrivate);
  if (!transports.email) throw new DeliveryError("email cannot be sent from this runtime (Cloudflare Workers has no SMTP); run `pglens alerter` on Node for email channels");
  if (message.to.length === 0) throw new DeliveryError("no enabled recipients");
  await checkOutboundHost(channel.smtp!.host, "smtp_host", denyPrivate);
  await transports.email(channel, message);
}
