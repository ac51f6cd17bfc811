/** Signing in to the console with a username and password (the same login, throttling and session as the API). */
import { Page } from "./page.tsx";

export function SignInPage(props: { next: string; error?: string }) {
  return (
    <Page title="Sign in">
      <h1>Sign in to pglens</h1>
      {props.error ? (
        <p class="error" role="alert">
          {props.error}
        </p>
      ) : null}
      <form class="sign-in" method="post" action="/sign-in">
        <input type="hidden" name="next" value={props.next} />
        <label>
          Username
          <input name="username" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </Page>
  );
}
