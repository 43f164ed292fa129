import { decodeProtectedHeader, importSPKI, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/engine/model";
import { apiOk, httpTask, register, target, waitFor, type WorkflowJson } from "./helpers";

const ENDED = ["COMPLETED", "FAILED", "TERMINATED", "TIMED_OUT"];

/** PEM text of DER `bytes` under `label`. */
function pem(label: string, bytes: ArrayBuffer): string {
  const base64 = btoa(String.fromCharCode(...new Uint8Array(bytes)));
  return `-----BEGIN ${label}-----\n${base64.replace(/.{64}/g, "$&\n")}\n-----END ${label}-----`;
}

/** A fresh RSA key pair for RS256, as PEM: the private key in PKCS#8 (as a service account's), the public key in SPKI. */
async function rsaKeyPair(): Promise<{ privatePem: string; publicPem: string }> {
  const pair = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  return {
    privatePem: pem("PRIVATE KEY", (await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer),
    publicPem: pem("PUBLIC KEY", (await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer),
  };
}

const signTask = (input: JsonObject): JsonObject => ({ name: "sign", taskReferenceName: "sign", type: "GET_SIGNED_JWT", inputParameters: input });

describe("GET_SIGNED_JWT", () => {
  it("signs a token with the key a secret holds, which a later task sends; the API shows neither the key nor the token", async () => {
    const { privatePem, publicPem } = await rsaKeyPair();
    await apiOk("PUT", "/api/secrets/jwt_signing_key", JSON.stringify(privatePem));
    await register({
      name: "jwt_google",
      tasks: [
        signTask({
          privateKey: "${workflow.secrets.jwt_signing_key}",
          privateKeyId: "key-123",
          subject: "robot@project.iam.gserviceaccount.com",
          issuer: "robot@project.iam.gserviceaccount.com",
          audience: "https://oauth2.googleapis.com/token",
          ttlInSecond: 600,
          scopes: ["https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/drive"],
        }),
        httpTask("call", { uri: target("/echo/token"), method: "GET", headers: { authorization: "Bearer ${sign.output._secrets.jwt}" } }),
      ],
    });
    const before = Math.floor(Date.now() / 1000);
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/jwt_google/1", { input: {} });
    expect(run.status, String(run["reasonForIncompletion"])).toBe("COMPLETED");
    const [sign, call] = run.tasks;
    expect(sign).toMatchObject({ status: "COMPLETED", inputData: { privateKey: "***" }, outputData: { _secrets: "***" } });
    expect(JSON.stringify(run)).not.toContain("PRIVATE KEY");

    const sent = String(((call!.outputData["response"] as JsonObject)["body"] as { headers: Record<string, string> }).headers["authorization"]);
    const token = sent.replace(/^Bearer /, "");
    const { payload } = await jwtVerify(token, await importSPKI(publicPem, "RS256"), { issuer: "robot@project.iam.gserviceaccount.com", audience: "https://oauth2.googleapis.com/token" });
    expect(decodeProtectedHeader(token)).toEqual({ alg: "RS256", typ: "JWT", kid: "key-123" });
    expect(payload).toMatchObject({ sub: "robot@project.iam.gserviceaccount.com", scope: "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/drive" });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(payload.exp! - payload.iat!).toBe(600);
  });

  it("fails for good on a key that is not one, without quoting it", async () => {
    await apiOk("PUT", "/api/secrets/jwt_not_a_key", JSON.stringify("-----BEGIN PRIVATE KEY-----\nNOT-A-KEY-AT-ALL\n-----END PRIVATE KEY-----"));
    await register({ name: "jwt_bad_key", tasks: [signTask({ privateKey: "${workflow.secrets.jwt_not_a_key}", subject: "s" })] });
    const run = await apiOk<WorkflowJson>("POST", "/api/workflow/execute/jwt_bad_key/1", { input: {} });
    const ended = run.status === "RUNNING" ? await waitFor(run.workflowId, ENDED) : run;
    expect(ended.status).toBe("FAILED");
    expect(ended.tasks[0]).toMatchObject({ status: "FAILED_WITH_TERMINAL_ERROR", reasonForIncompletion: 'privateKey is not a PKCS#8 PEM private key for RS256 ("-----BEGIN PRIVATE KEY-----" …)', outputData: {} });
    expect(JSON.stringify(ended)).not.toContain("NOT-A-KEY-AT-ALL");
  });
});
