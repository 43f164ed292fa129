import type { QuickJSWASMModule } from "quickjs-emscripten-core";

/** A QuickJS WebAssembly module in use, and the way to swap it for a fresh one once a run broke it. */
export interface ReplaceableModule {
  /** The module to use now. */
  current(): QuickJSWASMModule;
  /**
   * Starts loading a fresh module (once at a time) to take the broken one's place; the broken one stays current until
   * the fresh one is there. Without `reload` (the unit tests' Node loading) it stays for good.
   */
  replace(): void;
}

/** The module `initial`, replaced through `reload` when a run breaks it: what the script and jq runners share. */
export function replaceableModule(initial: QuickJSWASMModule, reload?: () => Promise<QuickJSWASMModule>): ReplaceableModule {
  let module = initial;
  let replacing = false;
  return {
    current: () => module,
    replace() {
      if (reload === undefined || replacing) return;
      replacing = true;
      const broken = module;
      reload().then(
        (fresh) => {
          if (module === broken) module = fresh;
          replacing = false;
        },
        () => (replacing = false),
      );
    },
  };
}
