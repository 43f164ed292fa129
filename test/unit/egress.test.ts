import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EgressConfigError, checkEgress, parseEgressPolicy } from "../../src/engine/tasks/http/egress";

const production = parseEgressPolicy({ allowPrivate: false });
const verdict = (url: string, policy = production) => checkEgress(new URL(url), policy);
const allowed = (url: string, policy = production) => verdict(url, policy).allowed;

/** Asserts the default policy denies `url` as non-public (the reason naming EGRESS_ALLOW_PRIVATE). */
function expectDeniedAsNonPublic(url: string): void {
  expect(verdict(url), url).toEqual({ allowed: false, reason: expect.stringMatching(/^egress denied: .*EGRESS_ALLOW_PRIVATE is off/) });
}

describe("egress policy: the non-public default", () => {
  it("denies loopback, private, link-local, CGNAT and other special ranges in every notation URL parsing accepts", () => {
    for (const url of [
      "http://127.0.0.1/", "http://127.1.2.3:8080/x", "http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/", "http://127.1/",
      "http://10.0.0.5/", "http://172.16.0.1/", "http://172.31.255.255/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data",
      "http://100.64.0.1/", "http://0.0.0.0/", "http://224.0.0.1/", "http://255.255.255.255/",
      "http://[::1]/", "http://[::]/", "http://[fc00::1]/", "http://[fd12:3456::1]/", "http://[fe80::1]/", "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:7f00:1]/", "http://[::ffff:10.1.2.3]/", "http://localhost:8787/", "http://api.localhost/", "http://LOCALHOST./",
    ]) {
      expectDeniedAsNonPublic(url);
    }
  });

  it("denies IPv6 forms that carry a non-public IPv4 address: IPv4-compatible, 6to4 and NAT64 (RFC 4291, 3056, 6052, 8215)", () => {
    for (const url of [
      "http://[::127.0.0.1]/", "http://[::7f00:1]/", "http://[::a9fe:a9fe]/latest/meta-data", "http://[::10.0.0.5]/",
      "http://[2002:7f00:1::]/", "http://[2002:a9fe:a9fe::1]/", "http://[2002:c0a8:101:5::1]/", "http://[64:ff9b:1::a00:5]/",
    ]) {
      expectDeniedAsNonPublic(url);
    }
    expect(verdict("http://[2002:a9fe:a9fe::]/")).toEqual({ allowed: false, reason: "egress denied: [2002:a9fe:a9fe::] is in the non-public range 169.254.0.0/16 (EGRESS_ALLOW_PRIVATE is off)" });
    // The same forms of a public address stay open, and a deny list's IPv4 range covers them.
    expect(allowed("http://[2002:808:808::]/")).toBe(true);
    expect(allowed("http://[::808:808]/")).toBe(true);
    expect(allowed("http://[2002:cb00:7101::]/", parseEgressPolicy({ deny: "203.0.113.0/24", allowPrivate: true }))).toBe(false);
  });

  it("judges the historic IPv4-translated form ::ffff:0:a.b.c.d (RFC 2765 2.1) by the IPv4 address it carries", () => {
    for (const url of ["http://[::ffff:0:127.0.0.1]/", "http://[::ffff:0:7f00:1]/", "http://[::ffff:0:a9fe:a9fe]/latest/meta-data", "http://[0:0:0:0:ffff:0:a00:5]/"]) {
      expectDeniedAsNonPublic(url);
    }
    expect(verdict("http://[::ffff:0:7f00:1]/")).toEqual({ allowed: false, reason: "egress denied: [::ffff:0:7f00:1] is in the non-public range 127.0.0.0/8 (EGRESS_ALLOW_PRIVATE is off)" });
    expect(allowed("http://[::ffff:0:808:808]/")).toBe(true);
    expect(allowed("http://[::ffff:0:cb00:7101]/", parseEgressPolicy({ deny: "203.0.113.0/24", allowPrivate: true }))).toBe(false);
  });

  it("denies a Teredo address (2001::/32, RFC 4380) whose client address, stored inverted, is non-public", () => {
    for (const url of [
      "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "http://[2001:0:4136:e378:8000:63bf:5601:5601]/latest/meta-data",
      "http://[2001:0000:4136:E378:8000:63BF:F5FF:FFFA]/",
    ]) {
      expectDeniedAsNonPublic(url);
    }
    expect(verdict("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/")).toEqual({ allowed: false, reason: "egress denied: [2001:0:4136:e378:8000:63bf:80ff:fffe] is in the non-public range 127.0.0.0/8 (EGRESS_ALLOW_PRIVATE is off)" });
    // A public client through a public server stays open, and a deny list's IPv4 range covers the client.
    expect(allowed("http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/")).toBe(true);
    expect(allowed("http://[2001:0:4136:e378:8000:63bf:34ff:8efe]/", parseEgressPolicy({ deny: "203.0.113.0/24", allowPrivate: true }))).toBe(false);
    // The server's address is not where the packets go: allowing it admits none of its clients.
    const server = parseEgressPolicy({ allow: "65.54.227.120", allowPrivate: false });
    expect(allowed("http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", server)).toBe(false);
    expect(allowed("http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", parseEgressPolicy({ allow: "8.8.8.8", allowPrivate: false }))).toBe(true);
  });

  it("denies the IPv6 blocks IANA marks not globally reachable: 2001::/23, documentation, the dummy prefix and SRv6 SIDs (RFC 9637, 9780, 9602)", () => {
    for (const url of [
      "http://[2001:2::1]/", "http://[2001:10::1]/", "http://[2001:1::4]/", "http://[2001:5::1]/", "http://[2001:1ff:ffff::1]/",
      "http://[2001:db8::1]/", "http://[3fff::1]/", "http://[3fff:fff:ffff::1]/", "http://[100:0:0:1::5]/", "http://[5f00:1:2::]/",
    ]) {
      expectDeniedAsNonPublic(url);
    }
    expect(verdict("http://[3fff::1]/")).toEqual({ allowed: false, reason: "egress denied: [3fff::1] is in the non-public range 3fff::/20 (EGRESS_ALLOW_PRIVATE is off)" });
    expect(verdict("http://[2001:2::1]/")).toEqual({ allowed: false, reason: "egress denied: [2001:2::1] is in the non-public range 2001::/23 (EGRESS_ALLOW_PRIVATE is off)" });
    // The parts IANA marks globally reachable stay open (PCP, TURN and SRP anycast, AMT, AS112-v6, ORCHIDv2, DETs),
    // as do the addresses just past each block.
    for (const url of [
      "http://[2001:1::1]/", "http://[2001:1::2]/", "http://[2001:1::3]/", "http://[2001:3::1]/", "http://[2001:4:112::1]/",
      "http://[2001:20::1]/", "http://[2001:2f:ffff::1]/", "http://[2001:30::1]/", "http://[2001:200::1]/", "http://[3fff:1000::1]/",
      "http://[5f01::1]/", "http://[100:0:0:2::1]/",
    ]) {
      expect(allowed(url), url).toBe(true);
    }
  });

  it("reads :: and ::1 as the unspecified and loopback addresses, not as IPv4-compatible 0.0.0.0 and 0.0.0.1 (RFC 4291 2.5.2, 2.5.3)", () => {
    expect(verdict("http://[::1]/")).toEqual({ allowed: false, reason: "egress denied: [::1] is in the non-public range ::1/128 (EGRESS_ALLOW_PRIVATE is off)" });
    expect(verdict("http://[0:0:0:0:0:0:0:0]/")).toEqual({ allowed: false, reason: "egress denied: [::] is in the non-public range ::/128 (EGRESS_ALLOW_PRIVATE is off)" });
    const policy = parseEgressPolicy({ deny: "0.0.0.0/8", allowPrivate: true });
    expect(allowed("http://[::1]/", policy)).toBe(true);
    expect(allowed("http://[::2]/", policy)).toBe(false);
  });

  it("allows public names and addresses, including ones that merely look close to private ranges", () => {
    for (const url of ["https://api.example.com/v1", "http://8.8.8.8/", "http://172.32.0.1/", "http://11.0.0.1/", "http://[2606:4700::1111]/", "http://localhost.example.com/", "http://169.255.0.1/"]) {
      expect(allowed(url), url).toBe(true);
    }
  });

  it("allows non-public addresses when EGRESS_ALLOW_PRIVATE is on (local development)", () => {
    const local = parseEgressPolicy({ allowPrivate: true });
    expect(allowed("http://127.0.0.1:9000/", local)).toBe(true);
    expect(allowed("http://localhost/", local)).toBe(true);
  });

  it("refuses schemes other than http and https", () => {
    for (const url of ["ftp://example.com/", "file:///etc/passwd", "data:text/plain,hi", "javascript:alert(1)"]) {
      expect(verdict(url)).toEqual({ allowed: false, reason: expect.stringContaining("http and https only") });
    }
  });
});

describe("egress policy: allow and deny lists", () => {
  it("deny wins, then an allow list admits only what it names (names, wildcards, addresses, ranges)", () => {
    const policy = parseEgressPolicy({ allow: "api.example.com, *.partner.net, 203.0.113.0/24, 10.1.2.3", deny: "bad.partner.net, 203.0.113.66", allowPrivate: false });
    expect(allowed("https://api.example.com/x", policy)).toBe(true);
    expect(allowed("https://eu.partner.net/x", policy)).toBe(true);
    expect(allowed("https://a.b.partner.net/x", policy)).toBe(true);
    expect(allowed("https://partner.net/x", policy)).toBe(false);
    expect(allowed("http://203.0.113.9/", policy)).toBe(true);
    // An explicitly allowed private address is reachable even with EGRESS_ALLOW_PRIVATE off.
    expect(allowed("http://10.1.2.3/", policy)).toBe(true);
    expect(verdict("https://bad.partner.net/", policy)).toEqual({ allowed: false, reason: "egress denied: bad.partner.net matches bad.partner.net in EGRESS_DENY" });
    expect(verdict("http://203.0.113.66/", policy)).toEqual({ allowed: false, reason: "egress denied: 203.0.113.66 matches 203.0.113.66 in EGRESS_DENY" });
    expect(verdict("https://other.example.com/", policy)).toEqual({ allowed: false, reason: "egress denied: other.example.com is not in EGRESS_ALLOW" });
  });

  it("a deny list alone keeps everything else open, and ranges match IPv6 and IPv4-mapped forms", () => {
    const policy = parseEgressPolicy({ deny: "2001:db8:1::/48, 198.51.100.0/24", allowPrivate: true });
    expect(allowed("http://[2001:db8:1::5]/", policy)).toBe(false);
    expect(allowed("http://[2001:db8:2::5]/", policy)).toBe(true);
    expect(allowed("http://[::ffff:198.51.100.7]/", policy)).toBe(false);
    expect(allowed("https://example.org/", policy)).toBe(true);
  });

  it("ranges cover the names local by definition: a denied loopback range denies localhost, however it is written", () => {
    const policy = parseEgressPolicy({ deny: "127.0.0.0/8", allowPrivate: true });
    for (const url of ["http://localhost:8080/", "http://LOCALHOST./", "http://api.localhost/", "http://127.0.0.1/"]) expect(allowed(url, policy), url).toBe(false);
    expect(verdict("http://localhost/", policy)).toEqual({ allowed: false, reason: "egress denied: localhost matches 127.0.0.0/8 in EGRESS_DENY" });
    expect(allowed("http://localhost/", parseEgressPolicy({ deny: "::1/128", allowPrivate: true }))).toBe(false);
    expect(allowed("http://example.org/", policy)).toBe(true);
  });

  it("reads a name without any of its trailing dots: localhost.., evil.com.. and 127.0.0.1.. meet their undotted forms' rules", () => {
    for (const url of ["http://localhost../", "http://LOCALHOST.../x", "http://api.localhost../", "http://127.0.0.1../"]) {
      expectDeniedAsNonPublic(url);
    }
    const policy = parseEgressPolicy({ allow: "api.example.com", deny: "evil.com, *.evil.net", allowPrivate: true });
    expect(verdict("http://evil.com../", policy)).toEqual({ allowed: false, reason: "egress denied: evil.com matches evil.com in EGRESS_DENY" });
    expect(allowed("http://a.evil.net.../", policy)).toBe(false);
    expect(allowed("https://api.example.com../v1", policy)).toBe(true);
  });

  it("takes host names with underscores, which URLs may hold (foo_bar.example.com)", () => {
    const policy = parseEgressPolicy({ deny: "foo_bar.attacker.tld, *.in_ternal.corp", allowPrivate: true });
    expect(allowed("http://foo_bar.attacker.tld/", policy)).toBe(false);
    expect(allowed("http://a.in_ternal.corp/", policy)).toBe(false);
    expect(allowed("http://foobar.attacker.tld/", policy)).toBe(true);
  });

  it("refuses a malformed entry by name instead of guessing what it meant", () => {
    for (const entry of ["10.0.0.0/33", "example..com", "*example.com", "10.0.0.0/x", "https://example.com", "::1/129"]) {
      expect(() => parseEgressPolicy({ allow: entry, allowPrivate: false }), entry).toThrow(EgressConfigError);
      expect(() => parseEgressPolicy({ allow: entry, allowPrivate: false }), entry).toThrow(entry);
    }
  });

  it("names the host as shown when it is given (a task's URL as stored, with ***), and then not the rule it met", () => {
    const shown = new URL("https://***.example/api");
    const policy = parseEgressPolicy({ allow: "api.example.com", deny: "*.internal.corp", allowPrivate: false });
    expect(checkEgress(new URL("https://Billing.Internal.Corp/api"), policy, shown)).toEqual({ allowed: false, reason: "egress denied: ***.example matches an entry in EGRESS_DENY" });
    expect(checkEgress(new URL("https://Other.Example/api"), policy, shown)).toEqual({ allowed: false, reason: "egress denied: ***.example is not in EGRESS_ALLOW" });
    expect(checkEgress(new URL("http://10.1.2.3/"), production, new URL("http://***/"))).toEqual({ allowed: false, reason: "egress denied: *** is in a non-public range (EGRESS_ALLOW_PRIVATE is off)" });
    expect(checkEgress(new URL("ftp://Host/"), production, { protocol: "its scheme's", hostname: "the task's host" }).allowed).toBe(false);
    // The same host shown as it is: the rule is named, for the operator.
    expect(checkEgress(new URL("https://billing.internal.corp/api"), policy, new URL("https://billing.internal.corp/***"))).toEqual({ allowed: false, reason: "egress denied: billing.internal.corp matches *.internal.corp in EGRESS_DENY" });
    expect(checkEgress(new URL("https://api.example.com/x"), policy, shown)).toEqual({ allowed: true });
  });

  it("never throws for any URL, and a denied verdict always says why", () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true }), (url) => {
        const answer = checkEgress(new URL(url), production);
        return answer.allowed || answer.reason.startsWith("egress denied: ");
      }),
      { numRuns: 300 },
    );
  });
});
