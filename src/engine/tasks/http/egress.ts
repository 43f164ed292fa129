/**
 * Which hosts HTTP tasks may call. Checked before every request and again at every redirect, so a workflow
 * cannot be used to reach the service's own network (SSRF). Pure: no I/O, no clock.
 *
 * A Worker never sees DNS answers, so address ranges apply to IP literals (in any form URL parsing accepts:
 * `http://2130706433/` and `http://0x7f.1/` are 127.0.0.1) and to names that are local by definition
 * (`localhost`, `*.localhost`). On Cloudflare's network, Workers cannot reach private addresses at all; the
 * policy makes that explicit, applies it in local development too, and adds the operator's own lists.
 */

/** One entry of an allow or deny list: a host name, `*.suffix`, an IP address, or a CIDR range. */
type HostPattern =
  | { kind: "name"; name: string }
  | { kind: "suffix"; suffix: string }
  | { kind: "range"; family: 4 | 6; bits: bigint; prefix: number; text: string };

/** The egress policy of HTTP tasks (`EGRESS_ALLOW`, `EGRESS_DENY`, `EGRESS_ALLOW_PRIVATE`). */
export interface EgressPolicy {
  allow: readonly HostPattern[];
  deny: readonly HostPattern[];
  /** Whether private, loopback, link-local and other non-public addresses may be called. */
  allowPrivate: boolean;
}

/** The verdict for one URL. */
export type EgressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Problems in a configured list, each naming the entry. */
export class EgressConfigError extends Error {
  override name = "EgressConfigError";
}

/**
 * Ranges that are not the public internet (IANA special-purpose registries, the "Globally Reachable: False"
 * entries). IPv6 adds the IETF protocol assignments `2001::/23` (less {@link GLOBALLY_REACHABLE}'s parts of it),
 * the documentation prefixes `2001:db8::/32` and `3fff::/20` (RFC 9637), the dummy prefix `100:0:0:1::/64`
 * (RFC 9780) and SRv6 SIDs `5f00::/16` (RFC 9602).
 */
const NON_PUBLIC_RANGES: readonly string[] = [
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
  "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
  "224.0.0.0/4", "240.0.0.0/4",
  "::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64", "2001::/23", "2001:db8::/32",
  "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "ff00::/8",
];
const NON_PUBLIC: readonly Range[] = NON_PUBLIC_RANGES.map((range) => parsePattern(range) as Range);

/**
 * Parts of {@link NON_PUBLIC_RANGES} that are not non-public themselves. The registry marks these globally
 * reachable inside `2001::/23`: the PCP, TURN and DNS-SD SRP anycast addresses (2001:1::1-3), AMT `2001:3::/32`,
 * AS112-v6 `2001:4:112::/48`, ORCHIDv2 `2001:20::/28` and drone DETs `2001:30::/28`. Teredo `2001::/32` it marks
 * N/A (RFC 4380 5): like 6to4, such an address is judged by the IPv4 address it carries ({@link IPV4_EMBEDDINGS}).
 */
const GLOBALLY_REACHABLE: readonly Range[] = [
  "2001::/32", "2001:1::1/128", "2001:1::2/128", "2001:1::3/128", "2001:3::/32", "2001:4:112::/48", "2001:20::/28", "2001:30::/28",
].map((range) => parsePattern(range) as Range);

type Range = Extract<HostPattern, { kind: "range" }>;

/**
 * IPv6 forms that carry an IPv4 address, and where (`shift`: the bits below it; `obfuscated`: stored inverted):
 * IPv4-mapped (`::ffff:a.b.c.d`, RFC 4291 2.5.5.2), IPv4-translated (`::ffff:0:a.b.c.d`, RFC 2765 2.1, historic, as
 * an old SIIT translator may still map it), IPv4-compatible (`::a.b.c.d`, RFC 4291 2.5.5.1, deprecated but still
 * parsed; not `::` and `::1`, the unspecified and loopback addresses of 2.5.2 and 2.5.3), NAT64's well-known
 * prefix (`64:ff9b::a.b.c.d`, RFC 6052), 6to4 (`2002:aabb:ccdd::`, RFC 3056: the IPv4 address in the 32 bits after
 * the prefix) and Teredo (`2001::/32`, RFC 4380 4: the client's IPv4 address, inverted, in the last 32 bits; not the
 * server's after the prefix, which packets to the client never reach, so an allow list naming a Teredo server does
 * not admit its clients). Each stands for its IPv4 address too, so `[::7f00:1]`, `[2002:a9fe:a9fe::]` and
 * `[2001:0:4136:e378:8000:63bf:80ff:fffe]` meet the rules of 127.0.0.1, 169.254.169.254 and 127.0.0.1.
 */
const IPV4_EMBEDDINGS: ReadonlyArray<{ range: Range; except?: Range; shift: bigint; obfuscated?: true }> = [
  { range: "::ffff:0:0/96", shift: 0n },
  { range: "::ffff:0:0:0/96", shift: 0n },
  { range: "::/96", except: "::/127", shift: 0n },
  { range: "64:ff9b::/96", shift: 0n },
  { range: "2002::/16", shift: 80n },
  { range: "2001::/32", shift: 0n, obfuscated: true as const },
].map(({ range, except, ...where }) => ({ range: parsePattern(range) as Range, ...(except ? { except: parsePattern(except) as Range } : {}), ...where }));

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

function parseIpv6(text: string): bigint | undefined {
  let address = text.toLowerCase();
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two groups.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const v4 = parseIpv4(dotted[2]!);
    if (v4 === undefined) return undefined;
    address = `${dotted[1]}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** An IP literal as a number and its family; undefined for a name. `hostname` is as `URL` gives it. */
function ipOf(hostname: string): { family: 4 | 6; bits: bigint } | undefined {
  const v4 = parseIpv4(hostname);
  if (v4 !== undefined) return { family: 4, bits: v4 };
  if (hostname.startsWith("[") && hostname.endsWith("]")) {
    const v6 = parseIpv6(hostname.slice(1, -1));
    if (v6 !== undefined) return { family: 6, bits: v6 };
  }
  return undefined;
}

function parsePattern(entry: string): HostPattern {
  const text = entry.trim().toLowerCase();
  const slash = text.indexOf("/");
  const address = slash === -1 ? text : text.slice(0, slash);
  const v4 = parseIpv4(address);
  const v6 = v4 === undefined ? parseIpv6(address.replace(/^\[|\]$/g, "")) : undefined;
  if (v4 !== undefined || v6 !== undefined) {
    const family = v4 !== undefined ? 4 : 6;
    const width = family === 4 ? 32 : 128;
    const prefix = slash === -1 ? width : Number(text.slice(slash + 1));
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > width || (slash !== -1 && !/^\d+$/.test(text.slice(slash + 1)))) {
      throw new EgressConfigError(`"${entry}": the prefix length must be 0 to ${width}`);
    }
    return { kind: "range", family, bits: (v4 ?? v6)!, prefix, text };
  }
  if (slash !== -1) throw new EgressConfigError(`"${entry}" is neither a host name nor an IP range`);
  if (text.startsWith("*.")) {
    const suffix = text.slice(1);
    if (!/^(\.[a-z0-9_-]+)+$/.test(suffix)) throw new EgressConfigError(`"${entry}" is not a valid wildcard (use *.example.com)`);
    return { kind: "suffix", suffix };
  }
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(text)) throw new EgressConfigError(`"${entry}" is not a valid host name, IP address or CIDR range`);
  return { kind: "name", name: text };
}

/**
 * Builds a policy from its configuration: comma-separated lists and whether non-public addresses may be
 * called. Throws {@link EgressConfigError} naming a bad entry (a typo must not silently open or close egress).
 */
export function parseEgressPolicy(config: { allow?: string | undefined; deny?: string | undefined; allowPrivate: boolean }): EgressPolicy {
  const list = (raw: string | undefined) => (raw ?? "").split(",").map((entry) => entry.trim()).filter(Boolean).map(parsePattern);
  return { allow: list(config.allow), deny: list(config.deny), allowPrivate: config.allowPrivate };
}

function inRange(ip: { family: 4 | 6; bits: bigint }, range: Range): boolean {
  if (ip.family !== range.family) return false;
  const shift = BigInt((range.family === 4 ? 32 : 128) - range.prefix);
  return ip.bits >> shift === range.bits >> shift;
}

/** Loopback's two addresses, which a name local by definition stands for. */
const LOOPBACK: ReadonlyArray<{ family: 4 | 6; bits: bigint }> = [
  { family: 4, bits: 0x7f000001n },
  { family: 6, bits: 1n },
];

/**
 * The addresses a host stands for: an IPv6 address carrying an IPv4 one (see {@link IPV4_EMBEDDINGS}) is also that
 * IPv4 address; `localhost` is loopback.
 */
function addressesOf(hostname: string): ReadonlyArray<{ family: 4 | 6; bits: bigint }> {
  if (isLocalName(hostname)) return LOOPBACK;
  const ip = ipOf(hostname);
  if (!ip) return [];
  if (ip.family === 4) return [ip];
  const embedded = IPV4_EMBEDDINGS.filter(({ range, except }) => inRange(ip, range) && !(except && inRange(ip, except))).map(({ shift, obfuscated }) => ({
    family: 4 as const,
    bits: ((ip.bits >> shift) ^ (obfuscated ? 0xffffffffn : 0n)) & 0xffffffffn,
  }));
  return [ip, ...embedded];
}

function matches(hostname: string, pattern: HostPattern): boolean {
  switch (pattern.kind) {
    case "name":
      return hostname === pattern.name;
    case "suffix":
      return hostname.endsWith(pattern.suffix);
    case "range":
      return addressesOf(hostname).some((ip) => inRange(ip, pattern));
  }
}

/** Whether one of the addresses `hostname` stands for is in the non-public `range` and not a globally reachable part of it. */
function isNonPublicIn(hostname: string, range: Range): boolean {
  return addressesOf(hostname).some((ip) => inRange(ip, range) && !GLOBALLY_REACHABLE.some((part) => inRange(ip, part)));
}

function describe(pattern: HostPattern): string {
  return pattern.kind === "name" ? pattern.name : pattern.kind === "suffix" ? `*${pattern.suffix}` : pattern.text;
}

/** Names that always mean this machine. */
function isLocalName(hostname: string): boolean {
  return hostname === "localhost" || hostname.endsWith(".localhost");
}

/**
 * True when the policy admits every http(s) URL (non-public addresses allowed, no lists), as in local
 * development: then redirects need no checking hop by hop.
 */
export function admitsEverything(policy: EgressPolicy): boolean {
  return policy.allowPrivate && policy.allow.length === 0 && policy.deny.length === 0;
}

/**
 * The host the rules read: lower case, without any trailing dot. URL parsing keeps every trailing dot of a name
 * (`localhost..`, `evil.com..`), and stripping only one would let such a name pass the rules its undotted form meets.
 */
function hostOf(url: Pick<URL, "hostname">): string {
  return url.hostname.toLowerCase().replace(/\.+$/, "");
}

/**
 * Whether an HTTP task may call `url`: deny list first, then the allow list, then the non-public default. `shown`: the
 * URL (its scheme and host) as a refusal names it, when `url` is not (a task's URL with its secrets' values, named as
 * stored, with `***`: the host parsed from the live one is lower-cased or punycoded, shapes no scrubbing of the secret's
 * value recognises).
 */
export function checkEgress(url: URL, policy: EgressPolicy, shown: Pick<URL, "protocol" | "hostname"> = url): EgressVerdict {
  if (url.protocol !== "http:" && url.protocol !== "https:") return { allowed: false, reason: `egress denied: ${shown.protocol} URLs are not allowed (http and https only)` };
  const hostname = hostOf(url);
  const named = hostOf(shown);
  // Named otherwise, the host is not told by the rule it met either (a deny entry `*.internal` would tell its domain).
  const told = named === hostname;
  const denied = policy.deny.find((pattern) => matches(hostname, pattern));
  if (denied) return { allowed: false, reason: `egress denied: ${named} matches ${told ? describe(denied) : "an entry"} in EGRESS_DENY` };
  if (policy.allow.some((pattern) => matches(hostname, pattern))) return { allowed: true };
  if (policy.allow.length > 0) return { allowed: false, reason: `egress denied: ${named} is not in EGRESS_ALLOW` };
  if (!policy.allowPrivate) {
    if (isLocalName(hostname)) return { allowed: false, reason: `egress denied: ${named} is ${told ? "this machine" : "not public"} (EGRESS_ALLOW_PRIVATE is off)` };
    const range = NON_PUBLIC.find((pattern) => isNonPublicIn(hostname, pattern));
    if (range) return { allowed: false, reason: `egress denied: ${named} is in ${told ? `the non-public range ${describe(range)}` : "a non-public range"} (EGRESS_ALLOW_PRIVATE is off)` };
  }
  return { allowed: true };
}
