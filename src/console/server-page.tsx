/**
 * The server page: charts of the chosen range (drawn in the browser from the metrics API, one request per chart),
 * its open alerts, the window's top statements and timeline, and what pglens knows of the server.
 */
import type { AlertRow } from "../datastore/alerts.ts";
import type { ServerInfo } from "../queries/server-info.ts";
import type { TopQuery } from "../queries/top-queries.ts";
import type { TimelineEvent } from "../timeline/events.ts";
import { assetUrl } from "./assets.ts";
import type { ChartSpec } from "./chart-catalogue.ts";
import { short, utc } from "./format.ts";
import { Page } from "./page.tsx";
import type { ServerStatus } from "./server-status.ts";
import { CONSOLE_RANGES, type TimeRange } from "./time-range.ts";

export interface ServerView {
  id: number;
  name: string;
  status: ServerStatus;
  range: TimeRange;
  perDatabase: boolean;
  charts: readonly ChartSpec[];
  alerts: AlertRow[];
  topQueries: TopQuery[];
  events: TimelineEvent[];
  info: ServerInfo;
}

const link = (id: number, params: Record<string, string | undefined>) => {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  return `/servers/${id}?${q}`;
};

function RangePicker(props: { v: ServerView }) {
  const { v } = props;
  const by = v.perDatabase ? "database" : undefined;
  return (
    <section class="ranges" aria-label="Time range">
      {CONSOLE_RANGES.map((r) => (
        <a href={link(v.id, { range: r, by })} aria-current={v.range.range === r ? "page" : undefined}>
          {r}
        </a>
      ))}
      <form method="get" action={`/servers/${v.id}`} class="ranges">
        <input type="hidden" name="range" value="custom" />
        {by ? <input type="hidden" name="by" value={by} /> : null}
        <label>
          From (UTC) <input type="datetime-local" name="from" value={v.range.from ?? ""} required />
        </label>
        <label>
          to <input type="datetime-local" name="to" value={v.range.to ?? ""} required />
        </label>
        <button type="submit">Show</button>
      </form>
      <a href={link(v.id, { range: v.range.range, from: v.range.from, to: v.range.to, by: v.perDatabase ? undefined : "database" })}>
        {v.perDatabase ? "Whole server" : "Per database"}
      </a>
    </section>
  );
}

function Chart(props: { chart: ChartSpec; perDatabase: boolean }) {
  const c = props.chart;
  const query = new URLSearchParams({ probe_name: c.probe, metrics: c.metrics.join(",") });
  if (props.perDatabase && c.perDatabase) query.set("group_by", "database_name");
  return (
    <figure
      class="chart"
      data-chart={c.id}
      data-query={query.toString()}
      data-unit={c.unit}
      data-ratio={c.ratio ? `${c.ratio.part},${c.ratio.rest}` : undefined}
    >
      <figcaption>{`${c.title}${props.perDatabase && c.perDatabase ? ", per database" : ""}`}</figcaption>
      <p class="muted">Loading…</p>
    </figure>
  );
}

function Info(props: { info: ServerInfo }) {
  const { postgresql, uptime, key_settings, extensions, databases } = props.info;
  const days = uptime.data.uptime_seconds === null ? null : uptime.data.uptime_seconds / 86_400;
  return (
    <section>
      <h2>Server</h2>
      <dl>
        <dt>Version</dt>
        <dd>{postgresql.data.version ?? "not sampled yet"}</dd>
        <dt>Role</dt>
        <dd>{postgresql.data.role ?? "unknown"}</dd>
        <dt>Up since</dt>
        <dd>
          {uptime.data.started_at ? `${utc(uptime.data.started_at)} (${days! < 1 ? `${Math.round(days! * 24)} h` : `${days!.toFixed(1)} d`})` : "unknown"}
        </dd>
        <dt>Databases</dt>
        <dd>{databases.data.map((d) => `${d.name} (${short(d.size_bytes)}B)`).join(", ") || "none sampled"}</dd>
        <dt>Extensions</dt>
        <dd>{extensions.data.map((e) => `${e.name} ${e.version ?? ""} in ${e.databases.join(", ")}`).join("; ") || "none sampled"}</dd>
      </dl>
      {key_settings.data.length ? (
        <table>
          <caption>Key settings</caption>
          <thead>
            <tr>
              <th scope="col">Setting</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {key_settings.data.map((s) => (
              <tr>
                <td>{s.name}</td>
                <td>{`${s.setting ?? ""}${s.unit ? ` ${s.unit}` : ""}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

export function ServerPage(props: { user: string; v: ServerView }) {
  const { v } = props;
  return (
    <Page title={v.name} signedInAs={props.user} styles={[assetUrl("uplot.css")]} scripts={[assetUrl("uplot.js"), assetUrl("charts.js")]}>
      <h1>
        {v.name} <span class={`status status-${v.status.replaceAll(" ", "-")}`}>{v.status}</span>
      </h1>
      <RangePicker v={v} />
      {v.range.error ? (
        <p class="error" role="alert">
          {v.range.error}
        </p>
      ) : null}
      <div class="charts" id="charts" data-connection={String(v.id)} data-window={new URLSearchParams(v.range.api).toString()}>
        {v.charts.map((c) => (
          <Chart chart={c} perDatabase={v.perDatabase} />
        ))}
      </div>
      <section>
        <h2>Open alerts</h2>
        {v.alerts.length ? (
          <ul>
            {v.alerts.map((a) => (
              <li>
                <span class={`severity-${a.severity}`}>{String(a.severity)}</span> <a href={`/alerts/${a.id}`}>{String(a.title)}</a> ({a.status}, since{" "}
                {utc(a.triggered_at as Date)})
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">None.</p>
        )}
      </section>
      <section>
        <h2>Top statements of the range</h2>
        {v.topQueries.length ? (
          <table>
            <thead>
              <tr>
                <th scope="col">Statement</th>
                <th scope="col">Database</th>
                <th scope="col" class="num">
                  Calls
                </th>
                <th scope="col" class="num">
                  Total ms
                </th>
                <th scope="col" class="num">
                  Mean ms
                </th>
              </tr>
            </thead>
            <tbody>
              {v.topQueries.map((q) => (
                <tr>
                  <td>
                    <pre class="query">{q.query}</pre>
                  </td>
                  <td>{q.database_name}</td>
                  <td class="num">{short(q.calls)}</td>
                  <td class="num">{short(q.total_exec_time)}</td>
                  <td class="num">{short(q.mean_exec_time)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No statements sampled in this range (pg_stat_statements).</p>
        )}
      </section>
      <section>
        <h2>Timeline</h2>
        {v.events.length ? (
          <ul class="timeline">
            {v.events.map((e) => (
              <li data-event={e.event_type}>
                {utc(e.occurred_at)} <span class={`severity-${e.severity}`}>{e.title}</span>: {e.summary}
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">Nothing happened in this range.</p>
        )}
      </section>
      <Info info={v.info} />
    </Page>
  );
}
