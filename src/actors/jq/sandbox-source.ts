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
  {
    why: "`scan` runs: jqjs logged each match to a console the sandbox does not have, and `scan(re; \"g\")` called a missing `String.gsub`",
    find: "                if (flags.includes('g')) flags = flags.gsub('g', '');",
    replace: "                flags = flags.replace(/g/g, '');",
  },
  {
    why: "`scan` runs: jqjs logged each match to a console the sandbox does not have, and `scan(re; \"g\")` called a missing `String.gsub` (the other half)",
    find: "                    console.log(match)\n",
    replace: "",
  },
  {
    why: "`test(re; flags)` takes its flags from its second argument (it took the regex as flags)",
    find: "        let flags = args[0].apply(input, conf).next().value || '';\n        for (let regexp of args[0].apply(input, conf)) {\n            let re = new RegExp(regexp, makeFlagString(flags));\n            yield re.test(input);",
    replace: "        let flags = args[1].apply(input, conf).next().value || '';\n        for (let regexp of args[0].apply(input, conf)) {\n            let re = new RegExp(regexp, makeFlagString(flags));\n            yield re.test(input);",
  },
  {
    why: "`gsub(re; s; flags)` replaces every match whatever the flags (with \"i\" it replaced the first only)",
    find: "        let flags = args[2].apply(input, conf).next().value || 'g';\n        yield* sub(input, conf, args[0], args[1], flags);",
    replace: "        let flags = args[2].apply(input, conf).next().value || '';\n        if (!flags.includes('g')) flags += 'g';\n        yield* sub(input, conf, args[0], args[1], flags);",
  },
  {
    why: "`@base64` and `@base64d` encode and decode UTF-8 (they called btoa and atob, which the sandbox does not have)",
    find: "        return btoa(v)\n    },\n    base64d(v) {\n        if (typeof v != 'string')\n            throw 'can only base64-decode strings'\n        return atob(v)",
    replace: "        return __base64(v)\n    },\n    base64d(v) {\n        if (typeof v != 'string')\n            throw 'can only base64-decode strings'\n        return __base64Decoded(v)",
  },
  {
    why: "`ltrimstr` and `rtrimstr` give anything but a string back unchanged, as jq does",
    find: "    'ltrimstr/1': Object.assign(function*(input, conf, args) {\n        if (nameType(input) != 'string')\n            throw 'can only trim strings, not ' + nameType(input)",
    replace: "    'ltrimstr/1': Object.assign(function*(input, conf, args) {\n        if (nameType(input) != 'string')\n            return yield input",
  },
  {
    why: "`ltrimstr` and `rtrimstr` give anything but a string back unchanged, as jq does (the other half)",
    find: "    'rtrimstr/1': Object.assign(function*(input, conf, args) {\n        if (nameType(input) != 'string')\n            throw 'can only trim strings, not ' + nameType(input)",
    replace: "    'rtrimstr/1': Object.assign(function*(input, conf, args) {\n        if (nameType(input) != 'string')\n            return yield input",
  },
  {
    why: "jq's `keys_unsorted`, `utf8bytelength`, `toarray`, `gmtime`, `mktime` and `strftime` (UTC), missing from jqjs",
    find: "    'tostring/0': function*(input) {",
    replace: "    // Added builtins (see sandbox-source.ts): jq's, missing from jqjs.\n    'keys_unsorted/0': function*(input) {\n        if (nameType(input) != 'object' && nameType(input) != 'array')\n            throw nameType(input) + ' has no keys'\n        yield Array.isArray(input) ? input.map((_, i) => i) : Object.keys(input)\n    },\n    'utf8bytelength/0': function*(input) {\n        if (typeof input != 'string')\n            throw nameType(input) + ' only strings have UTF-8 byte length'\n        yield __utf8Bytes(input).length\n    },\n    'toarray/0': function*(input) {\n        yield Array.isArray(input) ? input : [input]\n    },\n    'gmtime/0': function*(input) {\n        if (typeof input != 'number')\n            throw 'gmtime() requires a number'\n        const d = new Date(Math.floor(input) * 1000)\n        if (isNaN(d.getTime()))\n            throw 'gmtime() requires a valid time'\n        const yearStart = Date.UTC(d.getUTCFullYear(), 0, 1)\n        yield [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds() + (input - Math.floor(input)), d.getUTCDay(), Math.floor((d.getTime() - yearStart) / 86400000)]\n    },\n    'mktime/0': function*(input) {\n        if (!Array.isArray(input) || input.length < 6 || input.slice(0, 6).some(x => typeof x != 'number'))\n            throw 'mktime requires array of 6 numbers'\n        yield Math.floor(Date.UTC(input[0], input[1], input[2], input[3], input[4], Math.floor(input[5])) / 1000)\n    },\n    'strftime/1': Object.assign(function*(input, conf, args) {\n        for (let format of args[0].apply(input, conf)) {\n            if (typeof format != 'string')\n                throw 'strftime/1 requires a string format'\n            yield __strftime(input, format)\n        }\n    }, {params: [{label: 'format'}]}),\n    'tostring/0': function*(input) {",
  },
  {
    why: "jq's `keys_unsorted`, `utf8bytelength`, `toarray`, `gmtime`, `mktime` and `strftime` (UTC), missing from jqjs (the other half)",
    find: "function makeFlagString(flags) {",
    replace: "// Destructuring (see sandbox-source.ts): `E as [$a, {b: $c, $d}] | …`, in reduce and foreach too. A pattern is a\n// variable's name, {kind: 'array', items} or {kind: 'object', entries: [{key | keyNode, name?, sub?}]}.\nfunction __parsePattern(tokens, i) {\n    const t = tokens[i]\n    if (t && t.type == 'variable')\n        return {pattern: t.name, i: i + 1}\n    if (t && t.type == 'left-square') {\n        const items = []\n        i++\n        for (;;) {\n            const r = __parsePattern(tokens, i)\n            items.push(r.pattern)\n            i = r.i\n            if (tokens[i] && tokens[i].type == 'comma') { i++; continue }\n            if (tokens[i] && tokens[i].type == 'right-square') return {pattern: {kind: 'array', items}, i: i + 1}\n            throw 'expected , or ] in an array pattern at ' + describeLocation(tokens[i])\n        }\n    }\n    if (t && t.type == 'left-brace') {\n        const entries = []\n        i++\n        for (;;) {\n            const k = tokens[i]\n            let entry\n            if (k && k.type == 'variable') {\n                entry = {key: k.name, name: k.name}\n                i++\n            } else if (k && (k.type == 'identifier' || k.type == 'quote' || KEYWORDS.includes(k.type))) {\n                entry = {key: k.value}\n                i++\n            } else if (k && k.type == 'left-paren') {\n                const r = parse(tokens, i + 1, ['right-paren'])\n                entry = {keyNode: r.node}\n                i = r.i + 1\n            } else\n                throw 'expected a key in an object pattern at ' + describeLocation(k)\n            if (tokens[i] && tokens[i].type == 'colon') {\n                const r = __parsePattern(tokens, i + 1)\n                entry.sub = r.pattern\n                i = r.i\n            } else if (entry.name === undefined)\n                throw 'expected : after a key in an object pattern at ' + describeLocation(tokens[i])\n            entries.push(entry)\n            if (tokens[i] && tokens[i].type == 'comma') { i++; continue }\n            if (tokens[i] && tokens[i].type == 'right-brace') return {pattern: {kind: 'object', entries}, i: i + 1}\n            throw 'expected , or } in an object pattern at ' + describeLocation(tokens[i])\n        }\n    }\n    throw 'expected a variable name or a pattern after as at ' + describeLocation(t)\n}\nfunction* __bind(pattern, value, conf) {\n    if (typeof pattern == 'string') {\n        conf.variables[pattern] = value\n        return yield\n    }\n    if (pattern.kind == 'array') {\n        if (value !== null && !Array.isArray(value))\n            throw 'Cannot index ' + nameType(value) + ' with number'\n        yield* __bindEach(pattern.items.map((p, n) => [p, value === null || value[n] === undefined ? null : value[n]]), 0, conf)\n        return\n    }\n    if (value !== null && nameType(value) != 'object')\n        throw 'Cannot index ' + nameType(value) + ' with a key of an object pattern'\n    yield* __bindEntries(pattern.entries, 0, value, conf)\n}\nfunction* __bindEach(pairs, n, conf) {\n    if (n == pairs.length)\n        return yield\n    for (const _ of __bind(pairs[n][0], pairs[n][1], conf))\n        yield* __bindEach(pairs, n + 1, conf)\n}\nfunction* __bindEntries(entries, n, value, conf) {\n    if (n == entries.length)\n        return yield\n    const entry = entries[n]\n    for (const key of entry.keyNode ? entry.keyNode.apply(value, conf) : [entry.key]) {\n        if (typeof key != 'string')\n            throw 'Cannot index object with ' + nameType(key)\n        const field = value !== null && Object.hasOwn(value, key) ? value[key] : null\n        if (entry.name !== undefined)\n            conf.variables[entry.name] = field\n        if (entry.sub === undefined)\n            yield* __bindEntries(entries, n + 1, value, conf)\n        else\n            for (const _ of __bind(entry.sub, field, conf))\n                yield* __bindEntries(entries, n + 1, value, conf)\n    }\n}\nfunction __unbind(pattern, conf) {\n    if (typeof pattern == 'string')\n        delete conf.variables[pattern]\n    else if (pattern.kind == 'array')\n        pattern.items.forEach(p => __unbind(p, conf))\n    else\n        pattern.entries.forEach(e => {\n            if (e.name !== undefined) delete conf.variables[e.name]\n            if (e.sub !== undefined) __unbind(e.sub, conf)\n        })\n}\nfunction __utf8Bytes(text) {\n    const bytes = []\n    for (const ch of text) {\n        let c = ch.codePointAt(0)\n        if (c < 0x80) bytes.push(c)\n        else if (c < 0x800) bytes.push(0xc0 | c >> 6, 0x80 | c & 63)\n        else if (c < 0x10000) bytes.push(0xe0 | c >> 12, 0x80 | c >> 6 & 63, 0x80 | c & 63)\n        else bytes.push(0xf0 | c >> 18, 0x80 | c >> 12 & 63, 0x80 | c >> 6 & 63, 0x80 | c & 63)\n    }\n    return bytes\n}\nfunction __utf8Text(bytes) {\n    let text = ''\n    for (let i = 0; i < bytes.length;) {\n        const b = bytes[i]\n        const extra = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : b >= 0xc0 ? 1 : 0\n        let c = extra == 0 ? b : b & (0x3f >> extra)\n        let valid = extra > 0 || b < 0x80\n        for (let k = 1; k <= extra && valid; k++) {\n            const next = bytes[i + k]\n            if (next === undefined || (next & 0xc0) != 0x80) valid = false\n            else c = c << 6 | next & 63\n        }\n        text += valid ? String.fromCodePoint(c) : '\\ufffd'\n        i += valid ? extra + 1 : 1\n    }\n    return text\n}\nconst __BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'\nfunction __base64(text) {\n    const bytes = __utf8Bytes(text)\n    let out = ''\n    for (let i = 0; i < bytes.length; i += 3) {\n        const n = bytes[i] << 16 | (bytes[i + 1] ?? 0) << 8 | (bytes[i + 2] ?? 0)\n        out += __BASE64[n >> 18 & 63] + __BASE64[n >> 12 & 63] + (i + 1 < bytes.length ? __BASE64[n >> 6 & 63] : '=') + (i + 2 < bytes.length ? __BASE64[n & 63] : '=')\n    }\n    return out\n}\nfunction __base64Decoded(text) {\n    const bytes = []\n    let bits = 0, value = 0\n    for (const ch of text.replace(/=+$/, '')) {\n        const digit = __BASE64.indexOf(ch)\n        if (digit < 0)\n            throw text + ' is not valid base64 data'\n        value = value << 6 | digit\n        bits += 6\n        if (bits >= 8) {\n            bits -= 8\n            bytes.push(value >> bits & 255)\n        }\n    }\n    return __utf8Text(bytes)\n}\nconst __DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']\nconst __MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']\nfunction __strftime(input, format) {\n    let t\n    if (typeof input == 'number') t = input\n    else if (Array.isArray(input) && input.length >= 6 && input.slice(0, 6).every(x => typeof x == 'number'))\n        t = Date.UTC(input[0], input[1], input[2], input[3], input[4], Math.floor(input[5])) / 1000\n    else throw 'strftime/1 requires parsed datetime inputs'\n    const d = new Date(Math.floor(t) * 1000)\n    if (isNaN(d.getTime()))\n        throw 'strftime/1 requires a valid time'\n    const pad = (n, w = 2, c = '0') => String(n).padStart(w, c)\n    const yday = Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000) + 1\n    const fields = {\n        Y: () => String(d.getUTCFullYear()), C: () => pad(Math.floor(d.getUTCFullYear() / 100)), y: () => pad(d.getUTCFullYear() % 100),\n        m: () => pad(d.getUTCMonth() + 1), d: () => pad(d.getUTCDate()), e: () => pad(d.getUTCDate(), 2, ' '),\n        H: () => pad(d.getUTCHours()), I: () => pad((d.getUTCHours() + 11) % 12 + 1), M: () => pad(d.getUTCMinutes()), S: () => pad(d.getUTCSeconds()),\n        p: () => d.getUTCHours() < 12 ? 'AM' : 'PM', j: () => pad(yday, 3), a: () => __DAYS[d.getUTCDay()].slice(0, 3), A: () => __DAYS[d.getUTCDay()],\n        b: () => __MONTHS[d.getUTCMonth()].slice(0, 3), h: () => __MONTHS[d.getUTCMonth()].slice(0, 3), B: () => __MONTHS[d.getUTCMonth()],\n        u: () => String(d.getUTCDay() || 7), w: () => String(d.getUTCDay()), s: () => String(Math.floor(t)), Z: () => 'UTC', z: () => '+0000',\n        F: () => fields.Y() + '-' + fields.m() + '-' + fields.d(), T: () => fields.H() + ':' + fields.M() + ':' + fields.S(),\n        D: () => fields.m() + '/' + fields.d() + '/' + fields.y(), R: () => fields.H() + ':' + fields.M(),\n        c: () => fields.a() + ' ' + fields.b() + ' ' + fields.e() + ' ' + fields.T() + ' ' + fields.Y(), n: () => '\\n', t: () => '\\t', '%': () => '%',\n    }\n    return format.replace(/%(.)/g, (whole, spec) => {\n        if (!Object.hasOwn(fields, spec))\n            throw 'strftime/1: unsupported conversion %' + spec\n        return fields[spec]()\n    })\n}\nfunction makeFlagString(flags) {",
  },
  {
    why: "jq's `repeat`, `leaf_paths`, and `localtime` and `strflocaltime` (in UTC: the sandbox has no time zone)",
    find: "defineShorthandFunction('IN', ['source', 's'], 'any(source == s; .)')",
    replace: "defineShorthandFunction('IN', ['source', 's'], 'any(source == s; .)')\ndefineShorthandFunction('repeat', 'f', 'def _repeat: ., (f | _repeat); _repeat')\ndefineShorthandFunction('leaf_paths', [], 'paths(scalars)')\ndefineShorthandFunction('localtime', [], 'gmtime')\ndefineShorthandFunction('strflocaltime', 'f', 'strftime(f)')",
  },
  {
    why: "destructuring: `E as [$a, {b: $c}]` binds each variable of the pattern (jqjs took a variable only)",
    find: "            if (t.type == 'as') {\n                let nameTok = tokens[i+1]\n                if (nameTok.type != 'variable')\n                    throw 'expected variable name after as at ' + describeLocation(tokens[i]) + ' not ' + tokens[i].type\n                lhs = new VariableBinding(lhs, nameTok.name)\n                i += 2\n            }",
    replace: "            if (t.type == 'as') {\n                let bound = __parsePattern(tokens, i + 1)\n                lhs = new VariableBinding(lhs, bound.pattern)\n                i = bound.i\n            }",
  },
  {
    why: "destructuring in `reduce`",
    find: "            if (tokens[i].type != 'variable')\n                throw 'expected variable name in reduce at ' + describeLocation(tokens[i]) + ' not ' + tokens[i].type\n            let name = tokens[i].name\n            i++",
    replace: "            let bound = __parsePattern(tokens, i)\n            let name = bound.pattern\n            i = bound.i",
  },
  {
    why: "destructuring in `foreach`",
    find: "            if (tokens[i].type != 'variable')\n                throw 'expected variable name in foreach at ' + describeLocation(tokens[i]) + ' not ' + tokens[i].type\n            let name = tokens[i].name\n            i++",
    replace: "            let bound = __parsePattern(tokens, i)\n            let name = bound.pattern\n            i = bound.i",
  },
  {
    why: "destructuring: binding a pattern",
    find: "        for (let v of this.value.apply(input, conf)) {\n            conf.variables[this.name] = v\n            yield input\n        }\n        delete conf.variables[this.name]",
    replace: "        for (let v of this.value.apply(input, conf)) {\n            for (const _ of __bind(this.name, v, conf))\n                yield input\n        }\n        __unbind(this.name, conf)",
  },
  {
    why: "destructuring: binding a pattern in `reduce`",
    find: "                conf.variables[this.name] = v\n                for (let a of this.expr.apply(accum, conf))\n                    accum = a\n            }\n            delete conf.variables[this.name]",
    replace: "                for (const _ of __bind(this.name, v, conf))\n                    for (let a of this.expr.apply(accum, conf))\n                        accum = a\n            }\n            __unbind(this.name, conf)",
  },
  {
    why: "destructuring: binding a pattern in `foreach`",
    find: "                conf.variables[this.name] = v\n                for (let a of this.update.apply(accum, conf))\n                    accum = a\n                for (let e of this.extract.apply(accum, conf))\n                    yield e;\n            }\n            delete conf.variables[this.name]",
    replace: "                for (const _ of __bind(this.name, v, conf)) {\n                    for (let a of this.update.apply(accum, conf))\n                        accum = a\n                    for (let e of this.extract.apply(accum, conf))\n                        yield e;\n                }\n            }\n            __unbind(this.name, conf)",
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
