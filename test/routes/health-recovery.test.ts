import { afterAll, beforeAll, expect, it } from "vitest";
import { openPg } from "../../drivers/pg.ts";
import { testApp } from "../support/app.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startEmbeddedPostgres({ persistent: true });
});
afterAll(() => server.stop());

it("answers 503 within seconds of the datastore dying and recovers by itself", async () => {
  const db = openPg(server.url);
  const { app } = testApp(db);
  expect((await app.request("/health")).status).toBe(200);

  await server.stop();
  const started = Date.now();
  const down = await app.request("/health");
  expect(down.status).toBe(503);
  expect(Date.now() - started).toBeLessThan(5000);

  await server.start();
  let status = 0;
  for (let i = 0; i < 20 && status !== 200; i++) {
    status = (await app.request("/health")).status;
    if (status !== 200) await new Promise((r) => setTimeout(r, 250));
  }
  expect(status).toBe(200);
  await db.close();
});
