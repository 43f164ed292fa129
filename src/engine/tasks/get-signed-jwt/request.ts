import type { JsonObject, JsonValue } from "../../model";

/** The algorithms a GET_SIGNED_JWT signs with (Orkes': RS256, the default), each with a PKCS#8 private key of its kind. */
export const JWT_SIGNING_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"] as const;
/** One of {@link JWT_SIGNING_ALGORITHMS}. */
export type JwtSigningAlgorithm = (typeof JWT_SIGNING_ALGORITHMS)[number];

/** The longest lifetime a signed token may be given: a day. */
export const MAX_JWT_TTL_SECONDS = 86_400;
/** Its lifetime when none is given: an hour (Orkes' examples). */
export const DEFAULT_JWT_TTL_SECONDS = 3_600;

/** What a GET_SIGNED_JWT signs, read from its resolved input (Orkes' Get Signed JWT). */
export interface SignedJwtRequest {
  /** PEM (PKCS#8) text of the private key. */
  privateKey: string;
  algorithm: JwtSigningAlgorithm;
  /** The header's `kid`, when given (`privateKeyId`). */
  keyId?: string;
  /** The claims: `sub`, `iss`, `aud` when given; `scope`, the scopes joined by spaces (as Google's token endpoint reads them). */
  subject?: string;
  issuer?: string;
  audience?: string | string[];
  scope?: string;
  ttlSeconds: number;
}

/** A string given (not empty), or undefined when absent; `invalid` when something else is given. */
function optionalText(input: JsonObject, name: string): string | undefined | { invalid: string } {
  const value = input[name];
  if (value === undefined || value === null || value === "") return undefined;
  return typeof value === "string" ? value : { invalid: `${name} resolved to ${JSON.stringify(value)}, not text` };
}

/** Text, or a list of texts, as one list; undefined when absent; `invalid` otherwise. */
function textOrList(value: JsonValue | undefined, name: string): string[] | undefined | { invalid: string } {
  if (value === undefined || value === null || value === "") return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || !list.every((item): item is string => typeof item === "string" && item !== "")) return { invalid: `${name} resolved to ${JSON.stringify(value)}, not text or a list of texts` };
  return list;
}

const isInvalid = (value: unknown): value is { invalid: string } => typeof value === "object" && value !== null && "invalid" in value;

/**
 * The token a GET_SIGNED_JWT's resolved `input` asks for, or why it asks for none (never quoting the key). The key's
 * line breaks may be given escaped (`\n`, as a service account's JSON holds them): they are unescaped.
 */
export function signedJwtRequest(input: JsonObject): SignedJwtRequest | { invalid: string } {
  const key = input["privateKey"];
  if (typeof key !== "string" || key.trim() === "") return { invalid: "privateKey resolved to no text: it must be the PEM (PKCS#8) text of the private key, from a secret" };
  const privateKey = key.includes("\\n") && !key.includes("\n") ? key.replaceAll("\\n", "\n") : key;
  const algorithm = input["algorithm"] ?? "RS256";
  if (typeof algorithm !== "string" || !(JWT_SIGNING_ALGORITHMS as readonly string[]).includes(algorithm)) {
    return { invalid: `algorithm resolved to ${JSON.stringify(algorithm)}, not one of ${JWT_SIGNING_ALGORITHMS.join(", ")}` };
  }
  // Orkes' documentation writes it both ways.
  const ttl = input["ttlInSeconds"] ?? input["ttlInSecond"] ?? DEFAULT_JWT_TTL_SECONDS;
  if (typeof ttl !== "number" || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_JWT_TTL_SECONDS) {
    return { invalid: `ttlInSeconds resolved to ${JSON.stringify(ttl)}, not a whole number of seconds from 1 to ${MAX_JWT_TTL_SECONDS}` };
  }
  const request: SignedJwtRequest = { privateKey, algorithm: algorithm as JwtSigningAlgorithm, ttlSeconds: ttl };
  for (const [name, field] of [["privateKeyId", "keyId"], ["subject", "subject"], ["issuer", "issuer"]] as const) {
    const value = optionalText(input, name);
    if (isInvalid(value)) return value;
    if (value !== undefined) request[field] = value;
  }
  const audience = textOrList(input["audience"], "audience");
  if (isInvalid(audience)) return audience;
  if (audience !== undefined) request.audience = audience.length === 1 ? audience[0]! : audience;
  const scopes = textOrList(input["scopes"], "scopes");
  if (isInvalid(scopes)) return scopes;
  if (scopes !== undefined) request.scope = scopes.join(" ");
  return request;
}
