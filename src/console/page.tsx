/** The console's page shell: every page is server-rendered text (JSX escapes all data), styled by one stylesheet pglens serves itself. */
import { raw } from "hono/html";
import type { Child } from "hono/jsx";

export const STYLESHEET = "/console/console.css";

/** Pages may add their own files: the chart library's stylesheet, a script of their own (no inline script). */
export function Page(props: { title: string; signedInAs?: string; children: Child; styles?: string[]; scripts?: string[] }) {
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${props.title} · pglens`}</title>
          <link rel="stylesheet" href={STYLESHEET} />
          {(props.styles ?? []).map((href) => (
            <link rel="stylesheet" href={href} />
          ))}
          {(props.scripts ?? []).map((src) => (
            <script src={src} defer></script>
          ))}
        </head>
        <body>
          <header>
            <a class="brand" href="/">
              pglens
            </a>
            {props.signedInAs ? (
              <nav aria-label="Pages">
                <a href="/">Estate</a> <a href="/alerts">Alerts</a> <a href="/blackouts">Blackouts</a> <a href="/api/v1/docs">API</a>
              </nav>
            ) : null}
            {props.signedInAs ? (
              <form method="post" action="/sign-out" class="who">
                <span>{props.signedInAs}</span> <button type="submit">Sign out</button>
              </form>
            ) : null}
          </header>
          <main>{props.children}</main>
        </body>
      </html>
    </>
  );
}

/** The stylesheet: small, no external fonts or images. */
export const CONSOLE_CSS = `
:root { color-scheme: light; font-family: system-ui, sans-serif; color: #1b1b1b; background: #fff; }
body { margin: 0; }
header { display: flex; justify-content: space-between; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid #8884; }
.brand { font-weight: 700; text-decoration: none; color: inherit; }
main { max-width: 72rem; margin: 1.5rem auto; padding: 0 1.2rem; }
nav { display: flex; gap: 1rem; }
nav a, td a { color: inherit; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #8883; vertical-align: middle; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.sparkline polyline { fill: none; stroke: #1f77b4; stroke-width: 1.5; } .sparkline circle { fill: #1f77b4; }
.status { padding: .1rem .5rem; border-radius: .8rem; border: 1px solid currentColor; white-space: nowrap; }
.status-ok { color: #1a7a1a; } .status-alerting { color: #b71c1c; } .status-unreachable { color: #6b3fa0; }
.status-in-a-blackout { color: #595959; } .status-demo { color: #1f5f99; }
.panel { border: 1px solid #8884; border-radius: .4rem; padding: .8rem 1rem; margin: 1rem 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(30rem, 1fr)); gap: 1rem; }
.chart { margin: 0; border: 1px solid #8884; border-radius: .4rem; padding: .5rem; min-height: 14rem; }
.chart figcaption { font-weight: 600; margin-bottom: .3rem; }
.chart .error { font-weight: 400; }
.ranges { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.ranges a[aria-current] { font-weight: 700; }
.muted { color: #555; }
pre.query { white-space: pre-wrap; margin: 0; font-size: .85rem; max-width: 40rem; }
.who { display: flex; gap: .6rem; align-items: center; margin: 0; }
form.sign-in, form.actions { display: grid; gap: .8rem; max-width: 24rem; margin-top: 1.5rem; }
label { display: grid; gap: .25rem; }
input, button { font: inherit; padding: .4rem .6rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; }
dt { font-weight: 600; }
.error { color: #b71c1c; }
.severity-critical { color: #b71c1c; } .severity-warning { color: #8a5200; } .severity-info { color: #1f5f99; }
`;
