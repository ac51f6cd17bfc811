/** The console's alert pages: open alerts of the servers the user may read, and one alert as its notices link to it. */
import type { AlertRow } from "../datastore/alerts.ts";
import { withUnit } from "../notify/payloads.ts";
import type { AlertHistory } from "./alert-history.ts";
import { utc as when } from "./format.ts";
import { Page } from "./page.tsx";

type Alert = AlertRow & {
  title: string;
  severity: string;
  description: string;
  server_name: string;
  database_name: string;
  metric_name: string;
  metric_value: number | null;
  metric_unit: string | null;
  threshold_value: number | null;
  operator: string | null;
  triggered_at: Date;
  cleared_at: Date | null;
  clear_reason: string | null;
  clear_value: number | null;
  acknowledged_by: string | null;
  ack_message: string | null;
};

/** The alert list's filters, as the address carries them. */
export interface AlertListFilters {
  status: (typeof ALERT_STATUSES)[number];
  severity: string;
  server: string;
}
export const ALERT_STATUSES = ["open", "active", "acknowledged", "cleared", "all"] as const;
const STATUS_LABEL: Record<AlertListFilters["status"], string> = {
  open: "Open",
  active: "Open, not acknowledged",
  acknowledged: "Acknowledged",
  cleared: "Cleared (triggered in the last 7 days)",
  all: "All (triggered in the last 7 days)",
};

function Select(props: { name: string; label: string; value: string; options: Array<[string, string]> }) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        {props.options.map(([value, text]) => (
          <option value={value} selected={value === props.value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

export function AlertListPage(props: { user: string; alerts: Alert[]; filters: AlertListFilters; servers: Array<{ id: number; name: string }> }) {
  const f = props.filters;
  return (
    <Page title="Alerts" signedInAs={props.user}>
      <h1>Alerts</h1>
      <form method="get" action="/alerts" class="ranges" aria-label="Filters">
        <Select name="status" label="Status" value={f.status} options={ALERT_STATUSES.map((s) => [s, STATUS_LABEL[s]])} />
        <Select
          name="severity"
          label="Severity"
          value={f.severity}
          options={[
            ["", "Any"],
            ["critical", "Critical"],
            ["warning", "Warning"],
            ["info", "Info"],
          ]}
        />
        <Select name="server" label="Server" value={f.server} options={[["", "Any"], ...props.servers.map((s): [string, string] => [String(s.id), s.name])]} />
        <button type="submit">Filter</button>
      </form>
      {props.alerts.length === 0 ? (
        <p>No alerts match on the servers you can see.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Severity</th>
              <th scope="col">Alert</th>
              <th scope="col">Server</th>
              <th scope="col">Status</th>
              <th scope="col">Triggered</th>
              <th scope="col">Cleared</th>
            </tr>
          </thead>
          <tbody>
            {props.alerts.map((a) => (
              <tr data-alert={String(a.id)}>
                <td class={`severity-${a.severity}`}>{a.severity}</td>
                <td>
                  <a href={`/alerts/${a.id}`}>{a.title}</a>
                </td>
                <td>{a.server_name}</td>
                <td>{a.status}</td>
                <td>{when(a.triggered_at)}</td>
                <td>{when(a.cleared_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

/** Acknowledge (with a note, or as a false positive) or take the acknowledgment back: only for users who may. */
function AlertActions(props: { alert: Alert }) {
  const a = props.alert;
  if (a.status === "active") {
    return (
      <form class="actions" method="post" action={`/alerts/${a.id}/acknowledge`}>
        <label>
          Note
          <input name="message" maxlength={2000} />
        </label>
        <label>
          <input type="checkbox" name="false_positive" value="true" /> False positive (mutes this anomaly for 24 h)
        </label>
        <button type="submit">Acknowledge</button>
      </form>
    );
  }
  if (a.status === "acknowledged") {
    return (
      <form class="actions" method="post" action={`/alerts/${a.id}/unacknowledge`}>
        <button type="submit">Remove the acknowledgment</button>
      </form>
    );
  }
  return null;
}

function History(props: { alert: Alert; history: AlertHistory }) {
  const { alert: a, history: h } = props;
  return (
    <section>
      <h2>History</h2>
      <ul class="timeline">
        <li>{`${when(a.triggered_at)} fired`}</li>
        {h.acknowledgments.map((k) => (
          <li>{`${when(k.acknowledged_at)} acknowledged by ${k.acknowledged_by}${k.false_positive ? " as a false positive" : ""}${k.message ? `: ${k.message}` : ""}`}</li>
        ))}
        {a.cleared_at ? <li>{`${when(a.cleared_at)} cleared: ${a.clear_reason ?? "cleared"}`}</li> : null}
      </ul>
      <h3>Earlier alerts like this one</h3>
      {h.earlier.length ? (
        <ul>
          {h.earlier.map((e) => (
            <li>
              <a href={`/alerts/${e.id}`}>{when(e.triggered_at)}</a>
              {e.cleared_at ? ` to ${when(e.cleared_at)}${e.clear_reason ? ` (${e.clear_reason})` : ""}` : " (open)"}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">None.</p>
      )}
    </section>
  );
}

export function AlertPage(props: { user: string; alert: Alert; mayChange: boolean; history: AlertHistory }) {
  const a = props.alert;
  const value = withUnit(a.metric_value, a.metric_unit);
  return (
    <Page title={a.title} signedInAs={props.user}>
      <p>
        <a href="/alerts">Alerts</a>
      </p>
      <h1>
        <span class={`severity-${a.severity}`}>{a.severity}</span> {a.title}
      </h1>
      <p>{a.description}</p>
      <dl>
        <dt>Status</dt>
        <dd>{a.status}</dd>
        <dt>Server</dt>
        <dd>
          <a href={`/servers/${a.connection_id}`}>{a.server_name}</a>
        </dd>
        {props.history.rule ? (
          <>
            <dt>Rule</dt>
            <dd>{`${props.history.rule.name}: ${props.history.rule.description}`}</dd>
          </>
        ) : null}
        {a.database_name ? (
          <>
            <dt>Database</dt>
            <dd>{a.database_name}</dd>
          </>
        ) : null}
        {a.metric_name && value ? (
          <>
            <dt>{a.cleared_at ? "Fired with" : "Value"}</dt>
            <dd>
              {a.metric_name} = {value}
              {a.operator ? ` (${a.operator} ${withUnit(a.threshold_value, a.metric_unit)})` : ""}
            </dd>
          </>
        ) : null}
        <dt>Triggered</dt>
        <dd>{when(a.triggered_at)}</dd>
        {a.cleared_at ? (
          <>
            <dt>Cleared</dt>
            <dd>
              {when(a.cleared_at)}: {a.clear_reason ?? "cleared"}
              {a.clear_value !== null ? `, now ${withUnit(a.clear_value, a.metric_unit)}` : ""}
            </dd>
          </>
        ) : null}
        {a.acknowledged_by ? (
          <>
            <dt>Acknowledged by</dt>
            <dd>
              {a.acknowledged_by}
              {a.ack_message ? `: ${a.ack_message}` : ""}
            </dd>
          </>
        ) : null}
      </dl>
      {props.mayChange ? <AlertActions alert={a} /> : null}
      <History alert={a} history={props.history} />
    </Page>
  );
}

export function NotFoundPage(props: { user: string; what: string }) {
  return (
    <Page title="Not found" signedInAs={props.user}>
      <h1>Not found</h1>
      <p>{props.what}</p>
      <p>
        <a href="/">Estate</a>
      </p>
    </Page>
  );
}
