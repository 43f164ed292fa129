/** wrangler and the workerd test pool bundle a `.wasm` import as a compiled WebAssembly module. */
declare module "@jitl/quickjs-wasmfile-release-sync/wasm" {
  const wasmModule: WebAssembly.Module;
  export default wasmModule;
}
