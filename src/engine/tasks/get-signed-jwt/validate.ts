/**
 * Registration-time checks of a GET_SIGNED_JWT's inputs (Orkes' Get Signed JWT). Values from `${...}` expressions are
 * checked when the task runs.
 */
import * as v from "valibot";
import { fieldsOf, isExpression, isIntegerIn, isNonEmptyString, isOneOf, isRecord, orExpression, rule, validateWith, type UnknownRecord } from "../../definition/checks";
import { childPath, type ValidationIssue } from "../../validation-issue";
import { JWT_SIGNING_ALGORITHMS, MAX_JWT_TTL_SECONDS } from "./request";

const isTextOrList = (value: unknown) => isNonEmptyString(value) || (Array.isArray(value) && value.length > 0 && value.every(isNonEmptyString));
/** The token's lifetime, under either of the names Orkes' documentation gives it. */
const ttl = (name: string) => v.nullish(rule<unknown>(name, `a whole number of seconds from 1 to ${MAX_JWT_TTL_SECONDS} (3600 when left out), or an expression`, orExpression(isIntegerIn(1, MAX_JWT_TTL_SECONDS))));

const INPUT = fieldsOf({
  // A key written into the definition would be stored and shown with it: it must come from a secret (or an expression).
  privateKey: rule<string>("privateKey", "an expression giving the PEM (PKCS#8) text of the private key, such as ${workflow.secrets.jwt_key}; a key written in the definition would be stored and shown with it", isExpression),
  privateKeyId: v.nullish(rule<string>("privateKeyId", "text (the token header's kid), or an expression", isNonEmptyString)),
  subject: v.nullish(rule<string>("subject", "text (the token's sub), or an expression", isNonEmptyString)),
  issuer: v.nullish(rule<string>("issuer", "text (the token's iss), or an expression", isNonEmptyString)),
  audience: v.nullish(rule<unknown>("audience", "text or a list of texts (the token's aud), or an expression", isTextOrList)),
  scopes: v.nullish(rule<unknown>("scopes", "text or a list of texts (the token's scope), or an expression", isTextOrList)),
  ttlInSeconds: ttl("ttlInSeconds"),
  ttlInSecond: ttl("ttlInSecond"),
  algorithm: v.nullish(rule<string>("algorithm", `one of ${JWT_SIGNING_ALGORITHMS.join(", ")} (RS256 when left out), or an expression`, orExpression(isOneOf(JWT_SIGNING_ALGORITHMS)))),
});

/**
 * Problems in a GET_SIGNED_JWT's inputs.
 * @param task the task as received
 * @param path the task's own path, e.g. `tasks[1]`
 */
export function validateGetSignedJwtTask(task: UnknownRecord, path: string): ValidationIssue[] {
  const input = task["inputParameters"] ?? {};
  // A non-object inputParameters is reported by the common task checks.
  if (!isRecord(input)) return [];
  return validateWith(INPUT, input, childPath(path, "inputParameters"));
}
