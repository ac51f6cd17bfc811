/** The console's alert pages: open alerts of the servers the user may read, and one alert as its notices link to it. */
import type { AlertRow } from "../datastore/alerts.ts";
import { withUnit } from "../notify/payloads.ts";
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

const when = (d: Date | null) => (d ? d.toISOString().replace("T", " ").slice(0, 19) + " UTC" : "");

export function AlertListPage(props: { user: string; alerts: Alert[] }) {
  return (
    <Page title="Open alerts" signedInAs={props.user}>
      <h1>Open alerts</h1>
      {props.alerts.length === 0 ? (
        <p>No open alerts on the servers you can see.</p>
      ) : (
        <ul>
          {props.alerts.map((a) => (
            <li>
              <span class={`severity-${a.severity}`}>{a.severity}</span> <a href={`/alerts/${a.id}`}>{a.title}</a> on {a.server_name} ({a.status}, since {when(a.triggered_at)})
            </li>
          ))}
        </ul>
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

export function AlertPage(props: { user: string; alert: Alert; mayChange: boolean }) {
  const a = props.alert;
  const value = withUnit(a.metric_value, a.metric_unit);
  return (
    <Page title={a.title} signedInAs={props.user}>
      <p>
        <a href="/alerts">Open alerts</a>
      </p>
      <h1>
        <span class={`severity-${a.severity}`}>{a.severity}</span> {a.title}
      </h1>
      <p>{a.description}</p>
      <dl>
        <dt>Status</dt>
        <dd>{a.status}</dd>
        <dt>Server</dt>
        <dd>{a.server_name}</dd>
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
    </Page>
  );
}

export function NotFoundPage(props: { user: string; what: string }) {
  return (
    <Page title="Not found" signedInAs={props.user}>
      <h1>Not found</h1>
      <p>{props.what}</p>
      <p>
        <a href="/alerts">Open alerts</a>
      </p>
    </Page>
  );
}
