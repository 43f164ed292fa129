// Values the global setup hands to tests through vitest's provide/inject.
export {};
declare module "vitest" {
  interface ProvidedContext {
    /** Port of the loopback target server started by test/global-setup.ts. */
    targetPort: number;
    /** Private JWK (JSON) of the local OAuth issuer whose public key the target serves at /jwks.json. */
    oauthPrivateJwk: string;
  }
}
