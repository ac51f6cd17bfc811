/** The blackouts page: maintenance windows active now and to come, recurring schedules, and (for users who may) starting and stopping one. */
import type { BlackoutRow, ScheduleRow } from "../datastore/blackouts.ts";
import { utc } from "./format.ts";
import { Page } from "./page.tsx";

export const DURATIONS_MINUTES = [15, 30, 60, 120, 240, 480] as const;

export interface BlackoutView {
  windows: BlackoutRow[];
  schedules: Array<ScheduleRow & { next: Date | null }>;
  servers: Array<{ id: number; name: string }>;
  mayManage: boolean;
  now: number;
  error?: string;
}

function where(
  b: { scope: string; connection_id: number | null; cluster_id: number | null; group_id: number | null; database_name: string | null },
  names: Map<number, string>,
) {
  if (b.scope === "estate") return "the whole estate";
  if (b.scope === "server") return `${names.get(b.connection_id!) ?? `server ${b.connection_id}`}${b.database_name ? `, database ${b.database_name}` : ""}`;
  return b.scope === "cluster" ? `cluster ${b.cluster_id}` : `group ${b.group_id}`;
}

export function BlackoutPage(props: { user: string; v: BlackoutView }) {
  const { v } = props;
  const names = new Map(v.servers.map((s) => [s.id, s.name]));
  return (
    <Page title="Blackouts" signedInAs={props.user}>
      <h1>Blackouts</h1>
      <p class="muted">Alerts are not raised or sent for what a maintenance window covers while it is active.</p>
      {v.error ? (
        <p class="error" role="alert">
          {v.error}
        </p>
      ) : null}
      <h2>Active and scheduled windows</h2>
      {v.windows.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Covers</th>
              <th scope="col">Reason</th>
              <th scope="col">From</th>
              <th scope="col">Until</th>
              <th scope="col">By</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {v.windows.map((b) => {
              const active = b.start_time.getTime() <= v.now;
              return (
                <tr data-blackout={String(b.id)}>
                  <td>{where(b, names)}</td>
                  <td>{b.reason}</td>
                  <td>{utc(b.start_time)}</td>
                  <td>{utc(b.end_time)}</td>
                  <td>{b.created_by}</td>
                  <td>
                    {active ? "active" : "scheduled"}
                    {active && v.mayManage ? (
                      <form method="post" action={`/blackouts/${b.id}/stop`}>
                        <button type="submit">Stop now</button>
                      </form>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : (
        <p class="muted">None.</p>
      )}
      {v.mayManage ? (
        <form class="actions" method="post" action="/blackouts">
          <h2>Start a window now</h2>
          <label>
            Server
            <select name="connection_id" required>
              {v.servers.map((s) => (
                <option value={String(s.id)}>{s.name}</option>
              ))}
            </select>
          </label>
          <label>
            Database (empty: the whole server)
            <input name="database_name" maxlength={63} />
          </label>
          <label>
            For
            <select name="minutes">
              {DURATIONS_MINUTES.map((m) => (
                <option value={String(m)} selected={m === 60}>
                  {m < 60 ? `${m} minutes` : `${m / 60} hour${m > 60 ? "s" : ""}`}
                </option>
              ))}
            </select>
          </label>
          <label>
            Reason
            <input name="reason" maxlength={500} required />
          </label>
          <button type="submit">Start</button>
        </form>
      ) : null}
      <h2>Recurring schedules</h2>
      {v.schedules.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Covers</th>
              <th scope="col">When</th>
              <th scope="col">Next start</th>
            </tr>
          </thead>
          <tbody>
            {v.schedules.map((s) => (
              <tr>
                <td>{s.name}</td>
                <td>{where(s, names)}</td>
                <td>{`${s.cron_expression} (${s.timezone}) for ${s.duration_minutes} min${s.enabled ? "" : ", disabled"}`}</td>
                <td>{s.enabled && s.next ? utc(s.next) : "–"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">None. Schedules are made with the API (POST /api/v1/blackout-schedules).</p>
      )}
    </Page>
  );
}
