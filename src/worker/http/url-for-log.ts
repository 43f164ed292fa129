/**
 * A configured URL as the log shows it: its credentials (`user:password@`), query and fragment as `***`. They are what
 * such a URL is refused for and where it would hold a secret (a password, a `?token=`), and the log is read by whoever
 * may read the Worker's logs, not only those who may read its secrets (PUBLIC_BASE_URL refused, OAUTH_JWKS_URL failing).
 * Works on text that is no URL too.
 */
export function urlForLog(raw: string): string {
  const cut = raw.replace(/([?#]).*$/s, "$1***");
  const at = cut.lastIndexOf("@");
  if (at < 0) return cut;
  // Up to the last "@": a password may hold "@" or "/" itself, and a value may have no scheme.
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(cut)?.[0] ?? "";
  return `${scheme}***${cut.slice(at)}`;
}
