import { describe, expect, it } from "vitest";
import { signedJwtRequest } from "../../src/engine/tasks/get-signed-jwt";
import { latestNamed, registrationErrors, startedWith } from "./engine-env";

const jwtTask = (input: Record<string, unknown>) => ({ name: "sign", taskReferenceName: "sign", type: "GET_SIGNED_JWT", inputParameters: input });
const PEM = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----";

describe("GET_SIGNED_JWT", () => {
  it("registers with its key from an expression (a secret); refuses a key written in the definition, an unknown algorithm, a lifetime out of bounds, and mistyped claims", () => {
    expect(registrationErrors([jwtTask({ privateKey: "${workflow.secrets.gcp_key}", privateKeyId: "k1", subject: "robot@x", issuer: "robot@x", audience: "https://oauth2.googleapis.com/token", ttlInSecond: 3600, scopes: ["a", "b"], algorithm: "RS256" })])).toEqual([]);
    expect(registrationErrors([jwtTask({ privateKey: "${workflow.secrets.k}", ttlInSeconds: "${workflow.input.ttl}", algorithm: "${workflow.input.alg}" })])).toEqual([]);
    expect(registrationErrors([jwtTask({})])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.privateKey: /)]);
    expect(registrationErrors([jwtTask({ privateKey: PEM })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.privateKey: .*a key written in the definition would be stored and shown with it/)]);
    expect(registrationErrors([jwtTask({ privateKey: "${workflow.secrets.k}", algorithm: "HS256" })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.algorithm: .*RS256/)]);
    expect(registrationErrors([jwtTask({ privateKey: "${workflow.secrets.k}", ttlInSeconds: 0 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.ttlInSeconds: /)]);
    expect(registrationErrors([jwtTask({ privateKey: "${workflow.secrets.k}", ttlInSecond: 86_401 })])).toEqual([expect.stringMatching(/^tasks\[0\]\.inputParameters\.ttlInSecond: /)]);
    expect(registrationErrors([jwtTask({ privateKey: "${workflow.secrets.k}", scopes: [], audience: 3 })])).toEqual([expect.stringMatching(/\.audience: /), expect.stringMatching(/\.scopes: /)]);
  });

  it("reads its resolved input: the scopes joined by spaces, one audience as text, either lifetime name, escaped line breaks unescaped; never quoting the key", () => {
    expect(signedJwtRequest({ privateKey: PEM.replaceAll("\n", "\\n"), scopes: ["a", "b"], audience: ["x"], ttlInSecond: 60, subject: "s" })).toEqual({ privateKey: PEM, algorithm: "RS256", ttlSeconds: 60, subject: "s", audience: "x", scope: "a b" });
    expect(signedJwtRequest({ privateKey: PEM, audience: ["x", "y"], scopes: "one", ttlInSeconds: 5, algorithm: "ES256", privateKeyId: "k", issuer: "i" })).toEqual({ privateKey: PEM, algorithm: "ES256", ttlSeconds: 5, keyId: "k", issuer: "i", audience: ["x", "y"], scope: "one" });
    expect(signedJwtRequest({ privateKey: PEM })).toMatchObject({ ttlSeconds: 3600, algorithm: "RS256" });
    for (const [input, message] of [
      [{ privateKey: "" }, /^privateKey resolved to no text/],
      [{ privateKey: PEM, algorithm: "none" }, /^algorithm resolved to "none"/],
      [{ privateKey: PEM, ttlInSeconds: 1.5 }, /^ttlInSeconds resolved to 1\.5/],
      [{ privateKey: PEM, subject: 7 }, /^subject resolved to 7, not text/],
      [{ privateKey: PEM, scopes: [1] }, /^scopes resolved to \[1\]/],
    ] as const) {
      const answer = signedJwtRequest(input as Record<string, string>);
      expect(answer).toEqual({ invalid: expect.stringMatching(message) });
      expect(JSON.stringify(answer)).not.toContain("MIIB");
    }
  });

  it("is dispatched once started, its key stored as the secret's mask", () => {
    const state = startedWith("signer", [jwtTask({ privateKey: "${workflow.secrets.k}", subject: "${workflow.input.who}" }) as never], { who: "robot" }).state;
    expect(latestNamed(state, "sign")).toMatchObject({ status: "IN_PROGRESS", attempt: 1, inputData: { privateKey: "***", subject: "robot" } });
  });
});
