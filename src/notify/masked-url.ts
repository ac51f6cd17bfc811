/** A URL as people see it: user info and query values hidden, so a token carried in the URL is never returned. */
export function maskedUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "***";
  }
  if (u.username) u.username = "***";
  if (u.password) u.password = "***";
  const names = [...u.searchParams.keys()];
  if (names.length) u.search = names.map((name) => `${encodeURIComponent(name)}=***`).join("&");
  if (u.hash) u.hash = "***";
  return u.toString();
}
