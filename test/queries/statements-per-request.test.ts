/**
 * Datastore statements per metrics request, counted through the driver interface over every shape a dashboard
 * asks for, so that they cannot silently grow back: the preset windows, in the default buckets and in a few, of a
 * week's history one sample a minute (as the collector writes it, a round missed or late now and then; with the
 * collector stopped a while; a connection added hours ago; the collector stopped minutes ago; unevenly spaced
 * samples), counters and gauges, summed, grouped and filtered, averaged and at their maximum. With the
 * connection's context cached, each costs one data statement, but for the shapes listed in `allowed`, each with
 * the reason it costs more.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSamples } from "../../src/samples/sample-writer.ts";
import { resolveConfig } from "../../src/config.ts";
import { counting } from "../support/counting-driver.ts";
import { testApp } from "../support/app.ts";
import { userWithToken } from "../support/auth.ts";
import { addConnection, migratedDatastore, type TestDatastore } from "../support/datastore.ts";

const MINUTE = 60_000;
const SAMPLES = 8 * 24 * 60;

/** Each history: sample i's offset from its minute (ms), or undefined where there is no sample. */
const HISTORIES = {
  collector: (i: number) => (i % 2000 === 1000 ? undefined : i % 5000 === 2500 ? 5000 : 0),
  stopped: (i: number) => (inRange(SAMPLES - i, 180, 270) || inRange(SAMPLES - i, 3000, 3100) ? undefined : 0),
  added: (i: number) => (SAMPLES - i > 300 ? undefined : 0),
  // Stopped ten minutes ago: the window's last buckets have no sample, whose repeats the samples' count judges.
  quiet: (i: number) => (SAMPLES - i <= 10 ? undefined : 0),
  uneven: (i: number) => (i * 7919) % 900,
} satisfies Record<string, (i: number) => number | undefined>;
type History = keyof typeof HISTORIES;
const inRange = (x: number, lo: number, hi: number) => x > lo && x < hi;

const METRICS = ["xact_commit_per_sec", "xact_commit_delta", "numbackends", "xact_commit"] as const;
const WINDOWS = ["1h", "6h", "24h", "7d"] as const;
const NARROWED = ["", "&group_by=database_name", "&database_name=app"] as const;
const AGGREGATIONS = ["avg", "max"] as const;
/** The default 150 buckets, and a few (a sparkline's): few samples in wide buckets. */
const BUCKET_COUNTS = ["", "&buckets=10"] as const;
interface Shape {
  history: History;
  metric: (typeof METRICS)[number];
  window: (typeof WINDOWS)[number];
  narrowed: (typeof NARROWED)[number];
  aggregation: (typeof AGGREGATIONS)[number];
  buckets: (typeof BUCKET_COUNTS)[number];
}

/** The data statements a shape may cost, where more than one, and why. */
function allowed(s: Shape): number {
  const level = s.metric === "numbackends" || s.metric === "xact_commit";
  const change = !level;
  // Unevenly spaced samples (an import, a clock that drifts): the spacing facts read first for an entity's counters
  // (averaged, and deltas at any aggregation) show them so, and the entity cells or raw rows answer; a delta's
  // runs are also read by their sequence.
  const wideBuckets = s.buckets !== "" || s.window === "24h" || s.window === "7d";
  if (s.history === "uneven" && change && s.narrowed && wideBuckets) {
    if (s.metric === "xact_commit_delta") return 4;
    if (s.aggregation === "avg") return 2;
  }
  return 1;
}

describe("statements per metrics request", () => {
  let store: TestDatastore;
  let token: string;
  const connections = new Map<History, number>();
  const slot = Math.floor(Date.now() / MINUTE) * MINUTE;

  beforeAll(async () => {
    store = await migratedDatastore("pg");
    ({ token } = await userWithToken(store.db, "reader", { superuser: true }));
    for (const [history, offset] of Object.entries(HISTORIES) as Array<[History, (i: number) => number | undefined]>) {
      const id = await addConnection(store.db, history);
      await store.db.query(
        "INSERT INTO probe_configs (probe_name, scope, scope_id, collection_interval_seconds, retention_days) VALUES ('pg_stat_database', 'server', $1, 60, 31)",
        [id],
      );
      for (let first = 0; first < SAMPLES; first += 2000) {
        const rows = [];
        for (let i = first; i < Math.min(SAMPLES, first + 2000); i++) {
          const late = offset(i);
          if (late === undefined) continue;
          const collected_at = new Date(slot - (SAMPLES - 1 - i) * MINUTE + late).toISOString();
          for (const d of ["app", "shop"])
            rows.push({ collected_at, database_name: d, datname: d, xact_commit: 100 * i + (d === "app" ? 0 : i % 7), numbackends: i % 7 });
        }
        if (rows.length) await writeSamples(store.db, { connectionId: id, probe: "pg_stat_database", rows });
      }
      connections.set(history, id);
    }
  }, 120_000);
  afterAll(() => store.close());

  /** An app over a driver that counts statements, its token cached, and a GET that must answer 200. */
  const countingApp = () => {
    const { driver, statements } = counting(store.db);
    const { app } = testApp(driver, { config: { auth: { ...resolveConfig({}, {}).auth, cache_seconds: 600 } } });
    const get = async (path: string) => {
      const res = await app.request(path, { headers: { authorization: `Bearer ${token}` } });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body as Array<{ data: Array<{ value: number | null }> }>;
    };
    return { statements, get };
  };

  it("is one data statement, but for the shapes listed with their reasons", async () => {
    const { statements, get } = countingApp();
    const over: string[] = [];
    let answered = 0;
    for (const history of Object.keys(HISTORIES) as History[]) {
      const base = `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${connections.get(history)}`;
      await get(`${base}&metrics=numbackends`); // the token and the connection's context, cached from here on
      for (const metric of METRICS)
        for (const window of WINDOWS)
          for (const narrowed of NARROWED)
            for (const aggregation of AGGREGATIONS)
              for (const buckets of BUCKET_COUNTS) {
                statements.length = 0;
                const series = await get(`${base}&metrics=${metric}&time_range=${window}${narrowed}&aggregation=${aggregation}${buckets}`);
                if (series.some((s) => s.data.some((p) => p.value !== null))) answered++;
                const shape = { history, metric, window, narrowed, aggregation, buckets };
                if (statements.length > allowed(shape))
                  over.push(
                    `${JSON.stringify(shape)}: ${statements.length} statements (allowed ${allowed(shape)})\n  ${statements.map((s) => s.replace(/\s+/g, " ").slice(0, 100)).join("\n  ")}`,
                  );
              }
    }
    expect(over, over.join("\n")).toEqual([]);
    // Every request answered with values: none was cheap for want of data.
    expect(answered).toBe(Object.keys(HISTORIES).length * METRICS.length * WINDOWS.length * NARROWED.length * AGGREGATIONS.length * BUCKET_COUNTS.length);
  }, 120_000);

  it("is one data statement for an entity's counters over a window that ends on a sample", async () => {
    const { statements, get } = countingApp();
    const base = `/api/v1/metrics/query?probe_name=pg_stat_database&connection_id=${connections.get("collector")}`;
    await get(`${base}&metrics=numbackends`);
    // A dashboard's window aligned to the minute ends on a sample, which the window's end instant holds.
    const end = slot - 30 * MINUTE;
    const over: string[] = [];
    for (const hours of [6, 24, 7 * 24])
      for (const metric of ["xact_commit_per_sec", "xact_commit_delta"])
        for (const narrowed of ["&group_by=database_name", "&database_name=app"]) {
          const window = `&time_range=custom&time_start=${new Date(end - hours * 3_600_000).toISOString()}&time_end=${new Date(end).toISOString()}`;
          statements.length = 0;
          const series = await get(`${base}&metrics=${metric}${window}${narrowed}`);
          expect(series.some((s) => s.data.at(-1)?.value !== null)).toBe(true);
          if (statements.length > 1)
            over.push(
              `${hours} h ${metric}${narrowed}: ${statements.length} statements\n  ${statements.map((s) => s.replace(/\s+/g, " ").slice(0, 100)).join("\n  ")}`,
            );
        }
    expect(over, over.join("\n")).toEqual([]);
  }, 60_000);
});
