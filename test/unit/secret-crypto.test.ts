import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactSecretValues } from "../../src/actors/secrets";
import type { JsonObject } from "../../src/engine/model";
import { ApiError } from "../../src/worker/http/errors";
import { requireKeyring } from "../../src/worker/secrets/config";
import {
  MALFORMED_KEY_MESSAGE,
  NOT_CONFIGURED_MESSAGE,
  decryptSecret,
  encryptSecret,
  fromBase64,
  loadKeyring,
  toBase64,
  type SecretsKeyring,
} from "../../src/worker/secrets/crypto";

const keyOf = (fill: number) => Buffer.alloc(32, fill).toString("base64");
const KEY = keyOf(1);
const OTHER_KEY = keyOf(2);

async function keyring(raw = KEY): Promise<SecretsKeyring> {
  const result = await loadKeyring(raw);
  if (!result.ok) throw new Error(`test key refused: ${result.message}`);
  return result.keyring;
}

const STORED_FORM = /^v1:([A-Za-z0-9+/]+={0,2}):([A-Za-z0-9+/]+={0,2})$/;

describe("secrets key configuration", () => {
  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["blank", "  \n"],
  ])("a key that is %s means 'not configured', with the command to fix it", async (_label, raw) => {
    expect(await loadKeyring(raw)).toEqual({ ok: false, problem: "missing", message: NOT_CONFIGURED_MESSAGE });
    expect(NOT_CONFIGURED_MESSAGE).toBe("secrets are not configured: set SECRETS_ENCRYPTION_KEY (wrangler secret put SECRETS_ENCRYPTION_KEY)");
  });

  it.each([
    ["not base64", "this is not base64!"],
    ["16 bytes", Buffer.alloc(16, 3).toString("base64")],
    ["31 bytes", Buffer.alloc(31, 3).toString("base64")],
    ["33 bytes", Buffer.alloc(33, 3).toString("base64")],
    ["64 hex digits (openssl rand -hex 32)", Buffer.alloc(32, 0xab).toString("hex")],
    ["base64url alphabet", Buffer.alloc(32, 0xfb).toString("base64url")],
    ["bad padding", KEY.replace("=", "")],
  ])("a key that is %s is reported as malformed, without echoing it", async (_label, raw) => {
    const result = await loadKeyring(raw);
    expect(result).toEqual({ ok: false, problem: "malformed", message: MALFORMED_KEY_MESSAGE });
    expect(JSON.stringify(result)).not.toContain(raw);
  });

  it("accepts base64 of 32 bytes, also with the trailing newline a pasted secret often has", async () => {
    expect((await loadKeyring(KEY)).ok).toBe(true);
    expect((await loadKeyring(`${OTHER_KEY}\n`)).ok).toBe(true);
  });

  it("follows a changed configuration (the cache is keyed by the configured value)", async () => {
    expect((await loadKeyring(KEY)).ok).toBe(true);
    expect((await loadKeyring(undefined)).ok).toBe(false);
    expect((await loadKeyring(KEY)).ok).toBe(true);
  });

  it("requireKeyring refuses with 409 CONFLICT and the operator message, never a generic error or the key", async () => {
    for (const [env, message] of [
      [{}, NOT_CONFIGURED_MESSAGE],
      [{ SECRETS_ENCRYPTION_KEY: "" }, NOT_CONFIGURED_MESSAGE],
      [{ SECRETS_ENCRYPTION_KEY: "c2hvcnQ=" }, MALFORMED_KEY_MESSAGE],
    ] as const) {
      const error = await requireKeyring(env).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 409, code: "CONFLICT", message });
    }
    const ring = await requireKeyring({ SECRETS_ENCRYPTION_KEY: KEY });
    expect(ring.current).toBe("v1");
  });
});

describe("secret encryption", () => {
  it("stores v1:<base64 12-byte iv>:<base64 ciphertext+tag> that decrypts back, never the plaintext", async () => {
    const ring = await keyring();
    const stored = await encryptSecret(ring, "api_token", "s3cr3t-value");
    const match = STORED_FORM.exec(stored);
    expect(match).not.toBeNull();
    expect(Buffer.from(match![1]!, "base64")).toHaveLength(12);
    expect(Buffer.from(match![2]!, "base64")).toHaveLength("s3cr3t-value".length + 16);
    expect(stored).not.toContain("s3cr3t-value");
    expect(stored).not.toContain(Buffer.from("s3cr3t-value").toString("base64"));
    expect(await decryptSecret(ring, "api_token", stored)).toBe("s3cr3t-value");
  });

  it("encrypts the same value differently every time (fresh IV)", async () => {
    const ring = await keyring();
    const stored = await Promise.all(Array.from({ length: 20 }, () => encryptSecret(ring, "n", "same")));
    expect(new Set(stored).size).toBe(20);
    expect(new Set(stored.map((value) => value.split(":")[1])).size).toBe(20);
  });

  it("binds the name: a ciphertext under another name does not decrypt", async () => {
    const ring = await keyring();
    const stored = await encryptSecret(ring, "prod_token", "value");
    expect(await decryptSecret(ring, "prod_token", stored)).toBe("value");
    expect(await decryptSecret(ring, "dev_token", stored)).toBeUndefined();
    expect(await decryptSecret(ring, "prod_token ", stored)).toBeUndefined();
  });

  it("a different key, a tampered byte, an unknown version or a malformed stored form is undefined, not an exception", async () => {
    const ring = await keyring();
    const stored = await encryptSecret(ring, "n", "value");
    expect(await decryptSecret(await keyring(OTHER_KEY), "n", stored)).toBeUndefined();
    const [version, iv, ciphertext] = stored.split(":") as [string, string, string];
    const flipped = Buffer.from(ciphertext, "base64");
    flipped[0] = flipped[0]! ^ 1;
    expect(await decryptSecret(ring, "n", `${version}:${iv}:${flipped.toString("base64")}`)).toBeUndefined();
    const otherIv = Buffer.from(iv, "base64");
    otherIv[11] = otherIv[11]! ^ 1;
    expect(await decryptSecret(ring, "n", `${version}:${otherIv.toString("base64")}:${ciphertext}`)).toBeUndefined();
    expect(await decryptSecret(ring, "n", `v2:${iv}:${ciphertext}`)).toBeUndefined();
    for (const bad of ["", "value", "v1:", `v1:${iv}`, `v1:${iv}:${ciphertext}:x`, `v1:!!:${ciphertext}`, `v1:${Buffer.alloc(8).toString("base64")}:${ciphertext}`]) {
      expect(await decryptSecret(ring, "n", bad)).toBeUndefined();
    }
  });

  it("round-trips Unicode and a 64 KiB value", async () => {
    const ring = await keyring();
    for (const value of ["pä$$wörd ✓ 🔑", "x".repeat(64 * 1024), "line1\nline2", " spaced "]) {
      expect(await decryptSecret(ring, "n", await encryptSecret(ring, "n", value))).toBe(value);
    }
  });

  it("base64 helpers agree with Node's for every length around the chunk size", () => {
    for (const length of [0, 1, 2, 3, 4, 0x7fff, 0x8000, 0x8001, 70_000]) {
      const bytes = new Uint8Array(length).map((_, index) => (index * 31 + 7) & 0xff);
      const encoded = toBase64(bytes);
      expect(encoded).toBe(Buffer.from(bytes).toString("base64"));
      expect(fromBase64(encoded)).toEqual(bytes);
    }
    expect(fromBase64("a")).toBeUndefined();
    expect(fromBase64("ab-_")).toBeUndefined();
  });

  it("base64 helpers give what the spread-and-Uint8Array.from versions before them gave, for any bytes and text", () => {
    // The versions before the faster ones (30161323): every value stored since is read with the new ones.
    const previousToBase64 = (bytes: Uint8Array): string => {
      let binary = "";
      for (let offset = 0; offset < bytes.length; offset += 0x8000) binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
      return btoa(binary);
    };
    const previousFromBase64 = (text: string): Uint8Array | undefined => {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
      try {
        return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
      } catch {
        return undefined;
      }
    };
    const every = Uint8Array.from({ length: 256 }, (_, index) => index);
    expect(toBase64(every)).toBe(previousToBase64(every));
    // Around the new chunk (0x2000) and the old one (0x8000), as well as the arbitrary lengths below.
    for (const length of [0x1fff, 0x2000, 0x2001, 0x4000, 0x4001, 0x8001]) {
      const bytes = Uint8Array.from({ length }, (_, index) => (index * 131 + 17) & 0xff);
      expect(toBase64(bytes)).toBe(previousToBase64(bytes));
    }
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 20_000 }), fc.nat(0x2100), (bytes, offset) => {
        const view = bytes.subarray(Math.min(offset, bytes.length));
        const encoded = toBase64(view);
        return encoded === previousToBase64(view) && encoded === Buffer.from(view).toString("base64") && Buffer.from(fromBase64(encoded)!).equals(Buffer.from(view));
      }),
      { numRuns: 300 },
    );
    const base64ish = fc.string({ unit: fc.constantFrom(..."AQgw+/=-_a9 \n\u00e9"), maxLength: 24 });
    fc.assert(
      fc.property(fc.oneof(base64ish, fc.string({ maxLength: 24 })), (text) => {
        const now = fromBase64(text);
        const before = previousFromBase64(text);
        return now === undefined ? before === undefined : before !== undefined && Buffer.from(now).equals(Buffer.from(before));
      }),
      { numRuns: 2_000 },
    );
  });

  it("still opens a value stored by the code before the faster base64 helpers", async () => {
    // Written by main's crypto.ts (spread toBase64) with KEY for the name api_token.
    const stored = "v1:Wy9yYTGTGX2uzs+W:lbM6bIJ3JPM0WdS1aV91wNsLhAOnWfdykJn67pVZSqOhxjM=";
    expect(await decryptSecret(await keyring(), "api_token", stored)).toBe("pä$$wörd ✓ 🔑");
  });
});

describe("redactSecretValues", () => {
  it("masks every occurrence in strings and keys at any depth, longest value first; leaves other values alone", () => {
    const output: JsonObject = {
      headers: { authorization: "Bearer tok-123", "x-other": "tok-123tok-123" },
      list: ["tok-123-long", 7, true, null, { "tok-123": "key too" }],
      text: "nothing here",
    };
    expect(redactSecretValues(output, ["tok-123", "tok-123-long", ""])).toEqual({
      headers: { authorization: "Bearer ***", "x-other": "******" },
      list: ["***", 7, true, null, { "***": "key too" }],
      text: "nothing here",
    });
    expect(redactSecretValues("x", [])).toBe("x");
  });

  it("masks the shapes a value takes in URLs and JSON texts: percent-encoded, form-decoded, parsed, JSON-escaped", () => {
    const secret = 'Ab+C/d"e\\f{g}==';
    const shapes = [
      encodeURIComponent(secret),
      encodeURI(secret),
      new URLSearchParams([["k", secret]]).toString().slice(2),
      new URL(`http://h/?${secret}`).search.slice(1),
      new URL(`http://h/${secret}`).pathname.slice(1),
      secret.replaceAll("+", " "),
      JSON.stringify(secret).slice(1, -1),
    ];
    for (const shape of shapes) expect(redactSecretValues({ [`k ${shape}`]: `v ${shape}` }, [secret])).toEqual({ "k ***": "v ***" });
    // A decoded shape much shorter than the value would mask ordinary text: left alone.
    expect(redactSecretValues("A and B", ["%41%42%43%44%45%46"])).toBe("A and B");
  });

  it("keeps a `__proto__` key a plain key", () => {
    const input = JSON.parse('{"__proto__": {"polluted": "tok"}}') as JsonObject;
    const redacted = redactSecretValues(input, ["tok"]);
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(Object.keys(redacted)).toEqual(["__proto__"]);
    expect(JSON.stringify(redacted)).toBe('{"__proto__":{"polluted":"***"}}');
  });
});
