/** GET /api/v1/docs: Swagger UI over the OpenAPI document, public, every file served by pglens itself. */
import { expect, it } from "vitest";
import { openPglite } from "../../drivers/pglite.ts";
import { testApp } from "../support/app.ts";

const { app } = testApp(await openPglite());

it("serves a page that loads only pglens's own files", async () => {
  const res = await app.request("/api/v1/docs");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  const html = await res.text();
  const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  expect(sources).toEqual(["/api/v1/docs/swagger-ui.css", "/api/v1/docs/swagger-ui-bundle.js", "/api/v1/docs/init.js"]);
  for (const path of sources) {
    const file = await app.request(path);
    expect([path, file.status]).toEqual([path, 200]);
    expect((await file.text()).length).toBeGreaterThan(50);
  }
});

it("serves Swagger UI pointed at the OpenAPI document", async () => {
  const bundle = await (await app.request("/api/v1/docs/swagger-ui-bundle.js")).text();
  expect(bundle).toContain("SwaggerUIBundle");
  const init = await (await app.request("/api/v1/docs/init.js")).text();
  expect(init).toContain('url: "/api/v1/openapi.json"');
  const css = await app.request("/api/v1/docs/swagger-ui.css");
  expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
});

it("answers 404 for files it does not have, and 404 when a build lacks the viewer", async () => {
  const res = await app.request("/api/v1/docs/..%2Fpackage.json");
  expect(res.status).toBe(404);
  expect((await res.json()).error).toMatch(/no such file/);
  const { app: bare } = testApp(await openPglite(), { deps: { docsAssets: undefined } });
  const missing = await bare.request("/api/v1/docs/swagger-ui.css");
  expect(missing.status).toBe(404);
  expect((await missing.json()).error).toMatch(/does not include the API docs viewer/);
});
