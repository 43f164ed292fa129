// Values the global setup hands to tests through vitest's provide/inject.
export {};
declare module "vitest" {
  interface ProvidedContext {
    /** Port of the loopback target server started by test/global-setup.ts. */
    targetPort: number;
  }
}
