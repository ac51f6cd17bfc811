/** The estate page: every server the user may read, how it stands, its last day in a sparkline, its open alerts. */
import type { EstateRow } from "./estate-rows.ts";
import { assetUrl } from "./assets.ts";
import { age, short } from "./format.ts";
import { Page } from "./page.tsx";
import { Sparkline } from "./sparkline.tsx";

function AlertCounts(props: { alerts: EstateRow["alerts"] }) {
  const parts = (["critical", "warning", "info"] as const).filter((s) => props.alerts[s] > 0);
  if (!parts.length) return <span class="muted">none</span>;
  return (
    <>
      {parts.map((s) => (
        <span class={`severity-${s}`}>{`${props.alerts[s]} ${s} `}</span>
      ))}
    </>
  );
}

export function EstatePage(props: { user: string; rows: EstateRow[]; llm: boolean; now: number }) {
  return (
    <Page title="Estate" signedInAs={props.user} scripts={props.llm ? [assetUrl("estate.js")] : []}>
      <h1>Estate</h1>
      {props.llm ? (
        <section class="panel" id="overview" aria-live="polite">
          <h2>AI overview</h2>
          <p class="muted">Asking the LLM for a summary of what you can see…</p>
        </section>
      ) : null}
      {props.rows.length === 0 ? (
        <p>
          You can read no server yet. Register one with <code>POST /api/v1/connections</code> or <code>npx pglens demo</code>.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">Status</th>
              <th scope="col">Transactions/s, 24 h</th>
              <th scope="col" class="num">
                Sessions
              </th>
              <th scope="col">Open alerts</th>
              <th scope="col">Last sample</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((r) => {
              const last = [...r.tps].reverse().find((v) => v !== null) ?? null;
              return (
                <tr data-server={String(r.id)}>
                  <td>
                    <a href={`/servers/${r.id}`}>{r.name}</a>
                  </td>
                  <td>
                    <span class={`status status-${r.status.replaceAll(" ", "-")}`} title={r.connectionError ?? undefined}>
                      {r.status}
                    </span>
                  </td>
                  <td>
                    <Sparkline values={r.tps} label={`transactions per second over 24 hours, latest ${short(last)}`} /> <span class="muted">{short(last)}</span>
                  </td>
                  <td class="num">{short(r.sessions)}</td>
                  <td>
                    <a href={`/alerts?server=${r.id}`}>
                      <AlertCounts alerts={r.alerts} />
                    </a>
                  </td>
                  <td>{age(r.lastSampleAt, props.now)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Page>
  );
}
