/** API tokens expire in 90 days unless their creator asks otherwise (`never` included); another user's in 30 by default. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";
import { typedClient } from "../support/typed-client.ts";

let store: TestDatastore;
let api: ReturnType<typeof typedClient>;
const DAY_MS = 86_400_000;

beforeAll(async () => {
  store = await migratedDatastore("pglite");
  await userWithToken(store.db, "other");
  api = typedClient(testApp(store.db).app, (await userWithToken(store.db, "root", { superuser: true })).token);
});
afterAll(() => store?.close());

const daysLeft = (expiresAt: string | null | undefined) => (expiresAt ? (Date.parse(expiresAt) - Date.now()) / DAY_MS : null);

it("gives a token 90 days by default, 30 for another user's, and none only when asked", async () => {
  const own = await api.POST("/api/v1/rbac/tokens", { body: { note: "default" } });
  expect(own.response.status).toBe(201);
  expect(daysLeft(own.data?.expires_at)).toBeCloseTo(90, 1);
  const forOther = await api.POST("/api/v1/rbac/tokens", { body: { owner_username: "other" } });
  expect(daysLeft(forOther.data?.expires_at)).toBeCloseTo(30, 1);
  const forever = await api.POST("/api/v1/rbac/tokens", { body: { expires_in: "never" } });
  expect(forever.data?.expires_at).toBeNull();
});
