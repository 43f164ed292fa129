import { importPKCS8, SignJWT } from "jose";
import type { JsonObject, TaskExecution } from "../../engine/model";
import { signedJwtRequest } from "../../engine/tasks/get-signed-jwt";
import { resultOf, type DispatchResult } from "./result";

/**
 * Performs a GET_SIGNED_JWT with its live input (the private key the secret holds, never stored): signs the token its
 * input describes, issued `now`, and completes with it as `_secrets.jwt` (masked wherever the service shows it). A key
 * that is not a PKCS#8 PEM key of the algorithm's kind fails the task for good, naming neither the key nor its text.
 */
export async function dispatchSignedJwt(task: TaskExecution, input: JsonObject, now: number): Promise<DispatchResult> {
  const result = resultOf(task);
  const request = signedJwtRequest(input);
  if ("invalid" in request) return result("FAILED_WITH_TERMINAL_ERROR", {}, request.invalid);
  let key: CryptoKey;
  try {
    key = await importPKCS8(request.privateKey, request.algorithm);
  } catch {
    return result("FAILED_WITH_TERMINAL_ERROR", {}, `privateKey is not a PKCS#8 PEM private key for ${request.algorithm} ("-----BEGIN PRIVATE KEY-----" …)`);
  }
  const issuedAt = Math.floor(now / 1000);
  const token = new SignJWT(request.scope === undefined ? {} : { scope: request.scope })
    .setProtectedHeader({ alg: request.algorithm, typ: "JWT", ...(request.keyId === undefined ? {} : { kid: request.keyId }) })
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + request.ttlSeconds);
  if (request.subject !== undefined) token.setSubject(request.subject);
  if (request.issuer !== undefined) token.setIssuer(request.issuer);
  if (request.audience !== undefined) token.setAudience(request.audience);
  return result("COMPLETED", { _secrets: { jwt: await token.sign(key) } });
}
