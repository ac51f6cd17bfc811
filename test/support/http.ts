/** A small JSON client over app.request for API tests. */
import type { App } from "../../src/app.ts";

export function client(app: App) {
  return async (method: string, path: string, options: { token?: string; body?: unknown } = {}) => {
    const res = await app.request(path, {
      method,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      headers: { "content-type": "application/json", ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  };
}
