/**
 * The API as a typed client for tests: openapi-fetch over the app's own fetch, typed by the generated
 * test/support/api.gen.ts, so a renamed field or parameter fails type-checking rather than a test at run time.
 */
import createClient from "openapi-fetch";
import type { App } from "../../src/app.ts";
import type { paths } from "./api.gen.ts";

export function typedClient(app: App, token?: string) {
  return createClient<paths>({
    baseUrl: "http://pglens.test",
    fetch: async (request) => app.fetch(request),
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}
