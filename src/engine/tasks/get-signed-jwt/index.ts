/**
 * GET_SIGNED_JWT (Orkes'): signs a JSON Web Token with a private key (a secret's PEM text), for the services a
 * workflow calls that take one (a Google service account's token request, say): `sub`, `iss`, `aud` and `scope` as its
 * input gives them, `iat` now and `exp` `ttlInSeconds` later, `kid` its `privateKeyId`. The token is its output's
 * `_secrets.jwt`: masked (`***`) wherever the service shows it, read by later tasks as
 * `${<ref>.output._secrets.jwt}`. The actor signs (`actors/dispatch/signed-jwt.ts`), with the key the secret holds.
 */
import { dispatchedTaskType } from "../task-type";

export { DEFAULT_JWT_TTL_SECONDS, JWT_SIGNING_ALGORITHMS, MAX_JWT_TTL_SECONDS, signedJwtRequest, type JwtSigningAlgorithm, type SignedJwtRequest } from "./request";

/** Its attempt: the secret's read and one signature, in the object. */
export const getSignedJwtTask = dispatchedTaskType("GET_SIGNED_JWT", 1);
