/** The console's page shell: every page is server-rendered text (JSX escapes all data), styled by one stylesheet pglens serves itself. */
import { raw } from "hono/html";
import type { Child } from "hono/jsx";

export const STYLESHEET = "/console/console.css";

export function Page(props: { title: string; signedInAs?: string; children: Child }) {
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · pglens`}</title>
        <link rel="stylesheet" href={STYLESHEET} />
      </head>
      <body>
        <header>
          <a class="brand" href="/">
            pglens
          </a>
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
:root { color-scheme: light dark; font-family: system-ui, sans-serif; }
body { margin: 0; }
header { display: flex; justify-content: space-between; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid #8884; }
.brand { font-weight: 700; text-decoration: none; color: inherit; }
main { max-width: 60rem; margin: 1.5rem auto; padding: 0 1.2rem; }
.who { display: flex; gap: .6rem; align-items: center; margin: 0; }
form.sign-in, form.actions { display: grid; gap: .8rem; max-width: 24rem; margin-top: 1.5rem; }
label { display: grid; gap: .25rem; }
input, button { font: inherit; padding: .4rem .6rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; }
dt { font-weight: 600; }
.error { color: #d62728; }
.severity-critical { color: #d62728; } .severity-warning { color: #b36b00; } .severity-info { color: #1f77b4; }
`;
