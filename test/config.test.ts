import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configFromBindings, isToolEnabled, resolveConfig } from "../src/config.ts";
import { loadNodeConfig } from "../src/config-file.ts";

function yamlFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "pglens-cfg-")), "pglens.yaml");
  writeFileSync(path, text);
  return path;
}

describe("configuration", () => {
  it("has defaults that start the embedded datastore on port 8080", () => {
    const config = resolveConfig({}, {});
    expect(config).toMatchObject({ port: 8080, log_level: "info", datastore: { data_dir: "./.pglens" } });
    expect(config.datastore.url).toBeUndefined();
    expect(isToolEnabled(config, "query_metrics")).toBe(true);
  });

  it("reads a YAML file and lets environment variables override it", () => {
    const path = yamlFile("port: 9000\ndatastore:\n  url: postgres://a@filehost/db\nbuiltins:\n  tools:\n    query_database: false\n");
    const config = loadNodeConfig({ PGLENS_CONFIG: path, PGLENS_DATASTORE_URL: "postgres://b@envhost/db" });
    expect(config.port).toBe(9000);
    expect(config.datastore.url).toBe("postgres://b@envhost/db");
    expect(isToolEnabled(config, "query_database")).toBe(false);
    expect(isToolEnabled(config, "get_schema_info")).toBe(true);
  });

  it("takes read replicas as a YAML list or a comma-separated variable, with a lag bound of 30 s by default", () => {
    expect(resolveConfig({}, {}).datastore).toMatchObject({ read_urls: [], max_replica_lag_seconds: 30 });
    const fromEnv = resolveConfig({}, { PGLENS_DATASTORE_READ_URLS: "postgres://r1/db, postgres://r2/db", PGLENS_DATASTORE_MAX_REPLICA_LAG_SECONDS: "5" });
    expect(fromEnv.datastore).toMatchObject({ read_urls: ["postgres://r1/db", "postgres://r2/db"], max_replica_lag_seconds: 5 });
    expect(resolveConfig({ datastore: { read_urls: ["postgres://r1/db"] } }, {}).datastore.read_urls).toEqual(["postgres://r1/db"]);
    expect(() => resolveConfig({}, { PGLENS_DATASTORE_READ_URLS: "mysql://r1/db" })).toThrow(
      /`datastore.read_urls.0` \(from PGLENS_DATASTORE_READ_URLS\)|`datastore.read_urls.0`: must be postgres/,
    );
  });

  it("names the offending key, and the variable it came from", () => {
    expect(() => resolveConfig({ port: "eighty" }, {})).toThrow(/`port`: /);
    expect(() => resolveConfig({}, { PGLENS_DATASTORE_DRIVER: "mysql" })).toThrow(/`datastore.driver` \(from PGLENS_DATASTORE_DRIVER\)/);
    expect(() => resolveConfig({ datastore: { url: "mysql://x" } }, {})).toThrow(/`datastore.url`: must be a postgres:\/\/ URL/);
    expect(() => resolveConfig({ builtins: { tools: { no_such_tool: false } } }, {})).toThrow(/`builtins.tools.no_such_tool`: unknown key/);
    expect(() => resolveConfig({ prot: 1 }, {})).toThrow(/`prot`: unknown key/);
  });

  it("explains a missing or malformed file", () => {
    expect(() => loadNodeConfig({ PGLENS_CONFIG: "/nonexistent/pglens.yaml" })).toThrow(
      /cannot read the configuration file PGLENS_CONFIG=\/nonexistent\/pglens.yaml: ENOENT/,
    );
    expect(() => loadNodeConfig({ PGLENS_CONFIG: yamlFile("port: [1,\n") })).toThrow(/invalid configuration in .*pglens.yaml/);
    expect(() => loadNodeConfig({ PGLENS_CONFIG: yamlFile("- a list\n") })).toThrow(/expected a mapping/);
  });

  it("reads Workers bindings, with PGLENS_CONFIG as an object or JSON", () => {
    const fromObject = configFromBindings({ PGLENS_CONFIG: { builtins: { tools: { execute_explain: false } } }, PGLENS_DATASTORE_URL: "postgres://u@h/d" });
    expect(isToolEnabled(fromObject, "execute_explain")).toBe(false);
    expect(fromObject.datastore.url).toBe("postgres://u@h/d");
    const fromJson = configFromBindings({ PGLENS_CONFIG: '{"log_level":"warn"}' });
    expect(fromJson.log_level).toBe("warn");
    expect(() => configFromBindings({ PGLENS_CONFIG: "{nope" })).toThrow(/PGLENS_CONFIG binding/);
  });

  it("on Workers, adds a Hyperdrive read binding to the read replicas, and refuses one without a Hyperdrive primary", () => {
    const hyperdrive = (url: string) => ({ connectionString: url });
    const config = configFromBindings({
      PGLENS_DATASTORE_READ_URLS: "postgres://u@replica-1/d",
      HYPERDRIVE: hyperdrive("postgres://u@primary/d"),
      HYPERDRIVE_READ: hyperdrive("postgres://u@replica-2/d"),
    });
    expect(config.datastore).toMatchObject({
      url: "postgres://u@primary/d",
      driver: "pg",
      read_urls: ["postgres://u@replica-1/d", "postgres://u@replica-2/d"],
    });
    const renamed = configFromBindings({
      PGLENS_HYPERDRIVE_READ_BINDING: "REPLICA",
      HYPERDRIVE: hyperdrive("postgres://u@primary/d"),
      REPLICA: hyperdrive("postgres://u@r/d"),
    });
    expect(renamed.datastore.read_urls).toEqual(["postgres://u@r/d"]);
    expect(() => configFromBindings({ PGLENS_DATASTORE_URL: "postgres://u@h/d", HYPERDRIVE_READ: hyperdrive("postgres://u@r/d") })).toThrow(
      /`datastore.hyperdrive_read_binding`: the Worker has a Hyperdrive binding to a read replica \(HYPERDRIVE_READ\) but none to the datastore \(HYPERDRIVE\)/,
    );
  });
});
