/** A parsed `<keyId>:<keySecret>`. */
export interface ApiKeyCredential {
  keyId: string;
  keySecret: string;
}

/**
 * Splits `<keyId>:<keySecret>`; undefined when malformed. Its own module, free of D1 and the router, so the
 * configuration can tell a `BOOTSTRAP_ADMIN_KEY` no request could ever match (see config.ts).
 */
export function parseApiKey(value: string): ApiKeyCredential | undefined {
  const separator = value.indexOf(":");
  if (separator <= 0 || separator === value.length - 1) return undefined;
  return { keyId: value.slice(0, separator).trim(), keySecret: value.slice(separator + 1).trim() };
}
