import { describe, expect, it } from "vitest";
import { rawEcdsaSignature } from "../../src/worker/webhooks/verify";

// SendGrid's DER signatures as WebCrypto verifies them (src/worker/webhooks/verify.ts).

const der = (r: number[], s: number[]) => new Uint8Array([0x30, r.length + s.length + 4, 0x02, r.length, ...r, 0x02, s.length, ...s]);

describe("DER ECDSA signatures", () => {
  it("become r and s, 32 bytes each: a leading zero dropped, short values padded", () => {
    const r = [0x00, 0x80, ...new Array<number>(31).fill(1)];
    const s = [0x05];
    const raw = rawEcdsaSignature(der(r, s))!;
    expect(raw).toHaveLength(64);
    expect([...raw.subarray(0, 32)]).toEqual(r.slice(1));
    expect([...raw.subarray(32)]).toEqual([...new Array<number>(31).fill(0), 5]);
  });

  it("refuse what is no such signature: another tag, a wrong length, an integer over 32 bytes, bytes left over", () => {
    expect(rawEcdsaSignature(undefined)).toBeUndefined();
    expect(rawEcdsaSignature(new Uint8Array([0x31, 6, 2, 1, 1, 2, 1, 1]))).toBeUndefined();
    expect(rawEcdsaSignature(new Uint8Array([0x30, 9, 2, 1, 1, 2, 1, 1]))).toBeUndefined();
    expect(rawEcdsaSignature(der(new Array<number>(33).fill(0x7f), [1]))).toBeUndefined();
    expect(rawEcdsaSignature(new Uint8Array([0x30, 7, 2, 1, 1, 2, 1, 1, 0]))).toBeUndefined();
    expect(rawEcdsaSignature(new Uint8Array([0x30, 6, 2, 0, 2, 1, 1, 0]))).toBeUndefined();
  });
});
