/**
 * The script the jq sandbox runs: jqjs's source, made a classic script and with a few of its defects fixed. The fixes
 * are text replacements on the pinned version's source; each must find its text, so an upgrade that moved it fails
 * loudly (at load, and in the unit tests) instead of quietly dropping a fix.
 */

/** One replacement in jqjs's source, and why. */
interface SourceFix {
  readonly find: string;
  readonly replace: string;
  readonly why: string;
}

const FIXES: readonly SourceFix[] = [
  {
    why: "the module's exports become a global: QuickJS runs it as a classic script, and the sandbox calls it by name",
    find: "export { compile, prettyPrint, compileNode, formats }\nexport default jq",
    replace: "globalThis.__jqjs = jq",
  },
  {
    // jq's `a // b` gives a's values that are neither null nor false, or b's when there are none (an error in a
    // counts as none); jqjs passed null and false through, so `.missing // 5` gave null and 5.
    why: "`//` drops null and false, and an error on its left",
    find: "        let found = false\n        for (let v of this.lhs.apply(input, conf)) {\n            if (v !== null) found = true\n            yield v\n        }",
    replace:
      "        let found = false\n        const kept = []\n        try {\n            for (let v of this.lhs.apply(input, conf)) if (v !== null && v !== false) kept.push(v)\n        } catch (e) {}\n        for (let v of kept) {\n            found = true\n            yield v\n        }",
  },
  {
    // `.[1:]` and `.[:2]` on `.`: jqjs tested the parse result instead of its node for an empty bound, and took -1
    // (one before the end) for a missing end.
    why: "`.[from:]` and `.[:to]` slice to the end and from the start",
    find: "        if (fr.length === 0)\n            fr.node = new NumberNode(0)\n        r = parse(tokens, r.i + 1, ['right-square'])\n        if (r.length === 0)\n            r.node = new NumberNode(-1)",
    replace:
      "        if (fr.node.length === 0)\n            fr.node = new NumberNode(0)\n        r = parse(tokens, r.i + 1, ['right-square'])\n        if (r.node.length === 0)\n            r.node = new NumberNode(Infinity)",
  },
  {
    why: "`x[from:]` slices to the end",
    find: "                    if (e.node.length === 0)\n                        e.node = new NumberNode(-1)",
    replace: "                    if (e.node.length === 0)\n                        e.node = new NumberNode(Infinity)",
  },
  {
    // jqjs produced each key as a value of its own; an array's keys are its indices.
    why: "`keys` gives one sorted array",
    find: "    'keys/0': function*(input) {\n        yield* Object.keys(input).sort()\n    },",
    replace: "    'keys/0': function*(input) {\n        yield Array.isArray(input) ? input.map((_, i) => i) : Object.keys(input).sort()\n    },",
  },
];

/** jqjs's source (`@michaelhomer/jqjs/jq.js`) made the sandbox's script: see {@link FIXES}. Throws when a fix does not apply. */
export function jqSandboxSource(jqjs: string): string {
  let source = jqjs;
  for (const fix of FIXES) {
    const at = source.indexOf(fix.find);
    if (at < 0 || source.indexOf(fix.find, at + 1) >= 0) throw new Error(`jqjs's source has changed: the fix "${fix.why}" does not apply once`);
    source = source.slice(0, at) + fix.replace + source.slice(at + fix.find.length);
  }
  return source;
}
