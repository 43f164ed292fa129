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
  {
    why: "`try` and `catch` are keywords",
    find: "const KEYWORDS = ['as', 'reduce', 'foreach', 'import', 'include', 'def', 'if', 'then', 'else', 'end', 'elif', 'and', 'or'];",
    replace: "const KEYWORDS = ['as', 'reduce', 'foreach', 'import', 'include', 'def', 'if', 'then', 'else', 'end', 'elif', 'and', 'or', 'try', 'catch'];",
  },
  {
    // `try body catch handler`: the body runs to the first pipe, comma or closing bracket (or `catch`), the handler
    // too, so `try A catch B | C` is `(try A catch B) | C` as in jq.
    why: "`try … catch …` parses",
    find: "        // Conditional if-then-(elif-then)*-else?-end\n        } else if (t.type == 'if') {",
    replace:
      "        } else if (t.type == 'try') {\n            const ends = ['comma', 'pipe', 'as', 'right-paren', 'right-brace', 'right-square', '<end-of-program>'].concat(until)\n            let body = parse(tokens, i + 1, ['catch'].concat(ends))\n            let handler = null\n            i = body.i\n            if (tokens[i] && tokens[i].type == 'catch') {\n                let r = parse(tokens, i + 1, ends)\n                handler = r.node\n                i = r.i\n            }\n            i--\n            ret.push(new TryNode(body.node, handler))\n        // Conditional if-then-(elif-then)*-else?-end\n        } else if (t.type == 'if') {",
  },
  {
    // What jq's `error` raises, and what `try`/`?` may catch: jq's errors (jqjs throws strings, `error` a JqError, and a
    // jqjs defect a JavaScript error), never QuickJS's own InternalError (the budget's interrupt, out of memory, stack
    // overflow), which must end the run. `.a?` keeps a null it produces, as jq's does.
    why: "`try`, `error` and `?` catch jq's errors only, and `?` keeps nulls",
    find: "class ErrorSuppression extends ParseNode {\n    constructor(inner) {\n        super()\n        this.inner = inner\n    }\n    * apply(input, conf) {\n        try {\n            for (let o of this.inner.apply(input, conf))\n                if (o !== null)\n                    yield o\n        } catch {\n        }\n    }\n    * paths(input, conf) {\n        try {\n            for (let [o,p] of zip(this.inner.apply(input, conf),\n                    this.inner.paths(input, conf)))\n                if (o !== null)\n                    yield p\n        } catch {\n        }\n    }",
    replace: [
      "class JqError extends Error {",
      "    constructor(value) {",
      "        super(typeof value == 'string' ? value : JSON.stringify(value) + ' (not a string)')",
      "        this.value = value",
      "    }",
      "}",
      "function caughtJqError(e) {",
      "    if (e instanceof JqError) return e.value",
      "    if (typeof e == 'string') return e",
      "    if (e instanceof Error && e.name != 'InternalError') return e.message",
      "    throw e",
      "}",
      "class TryNode extends ParseNode {",
      "    constructor(body, handler) {",
      "        super()",
      "        this.body = body",
      "        this.handler = handler",
      "    }",
      "    * apply(input, conf) {",
      "        let caught",
      "        try {",
      "            for (let o of this.body.apply(input, conf))",
      "                yield o",
      "            return",
      "        } catch (e) {",
      "            caught = caughtJqError(e)",
      "        }",
      "        if (this.handler) yield* this.handler.apply(caught, conf)",
      "    }",
      "    * paths(input, conf) {",
      "        try {",
      "            yield* this.body.paths(input, conf)",
      "        } catch (e) {",
      "            caughtJqError(e)",
      "        }",
      "    }",
      "    toString() {",
      "        return 'try ' + this.body + (this.handler ? ' catch ' + this.handler : '')",
      "    }",
      "}",
      "class ErrorSuppression extends ParseNode {",
      "    constructor(inner) {",
      "        super()",
      "        this.inner = inner",
      "    }",
      "    * apply(input, conf) {",
      "        try {",
      "            for (let o of this.inner.apply(input, conf))",
      "                yield o",
      "        } catch (e) {",
      "            caughtJqError(e)",
      "        }",
      "    }",
      "    * paths(input, conf) {",
      "        try {",
      "            yield* this.inner.paths(input, conf)",
      "        } catch (e) {",
      "            caughtJqError(e)",
      "        }",
      "    }",
    ].join("\n"),
  },
  {
    why: "`error` and `error(message)` raise an error `try … catch` gets the message of",
    find: "    'empty/0': function*(input) {\n    },",
    replace:
      "    'empty/0': function*(input) {\n    },\n    'error/0': function*(input) {\n        throw new JqError(input)\n    },\n    'error/1': Object.assign(function*(input, conf, args) {\n        for (let message of args[0].apply(input, conf))\n            throw new JqError(message)\n    }, {params: [{mode: 'defer'}]}),",
  },
  {
    // jqjs gave null for `.a` on a number, a string or a boolean; jq raises "Cannot index number with "a"" (which `?`,
    // `try` and `//` then catch).
    why: "indexing what is not an object, an array or null is an error",
    find: "        if (t == 'null') return yield null;\n        for (let i of this.index.apply(input, conf)) {\n",
    replace:
      "        if (t == 'null') return yield null;\n        for (let i of this.index.apply(input, conf)) {\n            if (t != 'array' && t != 'object')\n                throw 'Cannot index ' + t + ' with ' + JSON.stringify(i)\n",
  },
  {
    why: "indexing the result of an expression the same way",
    find: "            let t = nameType(l)\n            for (let i of this.index.apply(input, conf)) {\n",
    replace:
      "            let t = nameType(l)\n            for (let i of this.index.apply(input, conf)) {\n                if (t == 'null') {\n                    yield null\n                    continue\n                }\n                if (t != 'array' && t != 'object')\n                    throw 'Cannot index ' + t + ' with ' + JSON.stringify(i)\n",
  },
  {
    // jqjs parsed with parseFloat: "x" gave null and "12abc" 12.
    why: "`tonumber` takes a number or a string that is one, and raises an error on anything else",
    find: "    'tonumber/0': function*(input) {\n        yield Number.parseFloat(input)\n    },",
    replace:
      "    'tonumber/0': function*(input) {\n        if (typeof input == 'number')\n            return yield input\n        if (typeof input == 'string' && /^\\s*-?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?\\s*$/.test(input))\n            return yield Number(input)\n        throw nameType(input) + ' (' + JSON.stringify(input) + ') cannot be parsed as a number'\n    },",
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
