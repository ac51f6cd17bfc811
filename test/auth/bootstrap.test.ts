import { afterAll, beforeAll, expect, it } from "vitest";
import { ensureFirstSuperuser } from "../../src/auth/bootstrap.ts";
import { verifyPassword } from "../../src/auth/passwords.ts";
import { resolveConfig } from "../../src/config.ts";
import { findUserByName } from "../../src/datastore/users.ts";
import { createLogger } from "../../src/log.ts";
import { migratedDatastore, type TestDatastore } from "../support/datastore.ts";

let store: TestDatastore;
beforeAll(async () => {
  store = await migratedDatastore("pglite");
});
afterAll(() => store.close());

const log = createLogger("error");
const config = (env: Record<string, string>) => resolveConfig({}, env);

it("creates the first superuser from PGLENS_ADMIN_USERNAME/PASSWORD only while there is no user", async () => {
  await expect(ensureFirstSuperuser(store.db, config({ PGLENS_ADMIN_USERNAME: "root" }), log)).rejects.toThrow(
    "set both PGLENS_ADMIN_USERNAME and PGLENS_ADMIN_PASSWORD",
  );
  await expect(ensureFirstSuperuser(store.db, config({ PGLENS_ADMIN_USERNAME: "root", PGLENS_ADMIN_PASSWORD: "short" }), log)).rejects.toThrow(
    "PGLENS_ADMIN_PASSWORD: password must be at least 12 characters",
  );
  expect(await ensureFirstSuperuser(store.db, config({}), log)).toBe(false);
  expect(await ensureFirstSuperuser(store.db, config({ PGLENS_ADMIN_USERNAME: "root", PGLENS_ADMIN_PASSWORD: "root's long passphrase" }), log)).toBe(true);
  const root = await findUserByName(store.db, "root");
  expect(root?.is_superuser).toBe(true);
  expect(await verifyPassword("root's long passphrase", root?.password_hash)).toBe(true);
  expect(await ensureFirstSuperuser(store.db, config({ PGLENS_ADMIN_USERNAME: "other", PGLENS_ADMIN_PASSWORD: "another long passphrase" }), log)).toBe(false);
  expect(await findUserByName(store.db, "other")).toBeUndefined();
});
