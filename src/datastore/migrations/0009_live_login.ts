import type { Migration } from "./types.ts";

/**
 * A second login per connection for the live tools. SET ROLE inside a session whose login is a superuser (or
 * holds the role it switched from) can be undone by the caller's own SQL; a separate pg_monitor login cannot
 * be escaped, so callers' SQL can run safely even when the collector's login is powerful.
 */
export const migration: Migration = {
  version: 9,
  name: "live_login",
  statements: [`ALTER TABLE connections ADD COLUMN live_username text`, `ALTER TABLE connections ADD COLUMN live_password_secret text`],
};
