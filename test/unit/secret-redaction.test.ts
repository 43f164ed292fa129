import { describe, expect, it } from "vitest";
import { redactSecretValues } from "../../src/actors/secrets";

const base64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

describe("redactSecretValues: a secret coming back in the shapes a service's answer gives it", () => {
  it("masks it with its whitespace run together, as a failure reason quotes a service's answer", () => {
    const pem = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\nAQEFAASCBKcwggSjAgEAAoIBAQ\n-----END KEY-----\n";
    const reason = `HTTP 500 from the remote service: ${pem.replace(/\s+/g, " ").trim()}`;
    expect(redactSecretValues(reason, [pem])).toBe("HTTP 500 from the remote service: ***");
    expect(redactSecretValues("said pass 45c5fb5c-77 then", ["pass  45c5fb5c-77"])).toBe("said *** then");
  });

  it("masks a numeric echo of it, as a JSON answer parses a PIN; not a short number, nor a boolean, which would mask counts and flags", () => {
    expect(redactSecretValues({ body: 603057881225, other: 603057881226, text: "pin 603057881225" }, ["603057881225"])).toEqual({ body: "***", other: 603057881226, text: "pin ***" });
    expect(redactSecretValues({ pin: 4821 }, ["4821"])).toEqual({ pin: "***" });
    expect(redactSecretValues({ count: 7, ok: true }, ["7", "true"])).toEqual({ count: 7, ok: true });
  });

  it("masks a host name it gives as a URL holds it, lower-cased or punycoded, as a service echoes the Host it was called at", () => {
    expect(redactSecretValues({ headers: { host: "acme-prod.tenants.example:8443" } }, ["Acme-Prod.Tenants.Example"])).toEqual({ headers: { host: "***:8443" } });
    expect(redactSecretValues("called xn--bcher-kva.example", ["Bücher.example"])).toBe("called ***");
    // A secret that is no host alone is not cut down to the part a URL would take as one.
    expect(redactSecretValues("user tok", ["user:tok@Host"])).toBe("user tok");
    expect(redactSecretValues("from 0.0.18.213", ["4821"])).toBe("from 0.0.18.213");
    // A secret without a dot is no host a service is called at: its lower-cased form would mask ordinary words.
    expect(redactSecretValues("administrator admin", ["Admin"])).toBe("administrator admin");
  });

  it("masks a secret of 64 KiB, the largest one stored", () => {
    const large = "k".repeat(64 * 1024);
    expect(redactSecretValues(`before ${large} after`, [large])).toBe("before *** after");
  });

  it("masks the value a quoted secret reads as, and the long strings a JSON secret holds", () => {
    expect(redactSecretValues({ body: "q-8c0e9d1f2a" }, ['"q-8c0e9d1f2a"'])).toEqual({ body: "***" });
    const keyFile = JSON.stringify({ type: "service_account", client_email: "robot@project.iam.example.com", private_key: "PK-84971c2e55d0a9b3f7" });
    expect(redactSecretValues({ body: JSON.parse(keyFile) as Record<string, string> }, [keyFile])).toEqual({ body: { type: "service_account", client_email: "***", private_key: "***" } });
  });

  it("masks it inside base64, at any alignment, as a binary answer is kept", () => {
    const secret = "bin-1c40e7aa-93f2-4d1e";
    for (const before of ["", "x", "xy", "xyz"]) {
      const encoded = base64(`${before}${secret} and after`);
      const masked = redactSecretValues(encoded, [secret]);
      expect(masked, before).toContain("***");
      expect(masked.length, before).toBeLessThan(encoded.length);
    }
    // Base64 of other bytes is left alone.
    expect(redactSecretValues(base64("nothing secret here at all"), [secret])).toBe(base64("nothing secret here at all"));
  });

  it("still leaves ordinary text alone: a short shape of a long secret is not masked on its own", () => {
    expect(redactSecretValues({ type: "service_account", ok: true, n: 1 }, [JSON.stringify({ type: "service_account", private_key: "PK-84971c2e55d0a9b3f7" })])).toEqual({ type: "service_account", ok: true, n: 1 });
  });
});
