/**
 * The script the jq sandbox runs: jqjs's source, made a classic script and with a few of its defects fixed. The fixes
 * are text replacements on the pinned version's source; each must find its text, so an upgrade that moved it fails
 * loudly (at load, and in the unit tests) instead of quietly dropping a fix. What jq has and jqjs lacks is appended
 * whole ({@link JQ_SANDBOX_ADDITIONS}); the fixes here are the changes inside jqjs's own code, mostly its parser.
 */
import { JQ_SANDBOX_ADDITIONS } from "./sandbox-additions";

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
    // counts as none); jqjs passed null and false through, so `.missing // 5` gave null and 5. QuickJS's own errors
    // (the budget, out of memory, stack overflow) are no jq errors: caught, `def f: f // f; f` ran for good.
    why: "`//` drops null and false, and a jq error on its left",
    find: "        let found = false\n        for (let v of this.lhs.apply(input, conf)) {\n            if (v !== null) found = true\n            yield v\n        }",
    replace:
      "        let found = false\n        const kept = []\n        try {\n            for (let v of this.lhs.apply(input, conf)) if (v !== null && v !== false) kept.push(v)\n        } catch (e) {\n            caughtJqError(e)\n        }\n        for (let v of kept) {\n            found = true\n            yield v\n        }",
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
    // `try body catch handler`: the body and the handler are terms, as jq 1.6's grammar reads them (see __parseTryBody
    // and __parseCatchHandler), so `try A catch B | C` is `(try A catch B) | C` and `try A + B` is `(try A) + B`.
    why: "`try … catch …` parses",
    find: "        // Conditional if-then-(elif-then)*-else?-end\n        } else if (t.type == 'if') {",
    replace:
      "        } else if (t.type == 'try') {\n            const ends = ['comma', 'pipe', 'as', 'right-paren', 'right-brace', 'right-square', '<end-of-program>'].concat(until)\n            let body = __parseTryBody(tokens, i + 1, ends, until)\n            let handler = null\n            i = body.i\n            if (tokens[i] && tokens[i].type == 'catch') {\n                let r = __parseCatchHandler(tokens, i + 1, ends, until)\n                handler = r.node\n                i = r.i\n            }\n            i--\n            ret.push(new TryNode(body.node, handler))\n        // Conditional if-then-(elif-then)*-else?-end\n        } else if (t.type == 'if') {",
  },
  {
    // `.a?` keeps a null it produces, as jq's does, and lets QuickJS's own InternalError through (see caughtJqError).
    why: "`?` catches jq's errors only, and keeps nulls",
    find: "    * apply(input, conf) {\n        try {\n            for (let o of this.inner.apply(input, conf))\n                if (o !== null)\n                    yield o\n        } catch {\n        }\n    }\n    * paths(input, conf) {\n        try {\n            for (let [o,p] of zip(this.inner.apply(input, conf),\n                    this.inner.paths(input, conf)))\n                if (o !== null)\n                    yield p\n        } catch {\n        }\n    }",
    replace:
      "    * apply(input, conf) {\n        try {\n            for (let o of this.inner.apply(input, conf))\n                yield o\n        } catch (e) {\n            caughtJqError(e)\n        }\n    }\n    * paths(input, conf) {\n        try {\n            yield* this.inner.paths(input, conf)\n        } catch (e) {\n            caughtJqError(e)\n        }\n    }",
  },
  {
    // `label $name | body`: the body runs to the end of the enclosing pipe, as the right of `as` does.
    why: "`label $name | …` and `break $name` parse",
    find: "            if (t.value == 'true' || t.value == 'false')\n                ret.push(new BooleanNode(t.value == 'true'))",
    replace:
      "            if (t.value == 'label' && tokens[i+1] && tokens[i+1].type == 'variable' && tokens[i+2] && tokens[i+2].type == 'pipe') {\n                let r = parse(tokens, i + 3, until)\n                ret.push(new LabelNode(tokens[i+1].name, r.node))\n                i = r.i\n                if (tokens[i] && until.indexOf(tokens[i].type) != -1)\n                    i--\n            } else if (t.value == 'break' && tokens[i+1] && tokens[i+1].type == 'variable') {\n                ret.push(new BreakNode(tokens[i+1].name))\n                i++\n            } else if (t.value == 'true' || t.value == 'false')\n                ret.push(new BooleanNode(t.value == 'true'))",
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
    // The source of `E as $x | body` runs in the scope around it, as jackson-jq's PipedQuery evaluates it (the pattern
    // binds in a child scope the source never sees): its names are put back before each next value of E is asked for.
    // Bound until E's end, `10 as $x | (range(3) | . + $x) as $x | $x` read its own last $x and gave 10, 11, 13.
    why: "destructuring: binding a pattern, for the body only",
    find: "        for (let v of this.value.apply(input, conf)) {\n            conf.variables[this.name] = v\n            yield input\n        }\n        delete conf.variables[this.name]",
    // A plain `$x` is set without __bind's generator, and the names' outer values are read once: per value, these were
    // a third of the cost of a binding.
    replace: "        const names = __bindingNames(this)\n        const outer = __readNames(names, conf.variables)\n        for (let v of this.value.apply(input, conf)) {\n            try {\n                if (typeof this.name == 'string') {\n                    conf.variables[this.name] = v\n                    yield input\n                } else {\n                    for (const _ of __bind(this.name, v, conf))\n                        yield input\n                }\n            } finally {\n                __putNames(names, outer, conf.variables)\n            }\n        }",
  },
  {
    // Each value of the update becomes the state and is extracted, as jackson-jq's ForeachExpression (and jq 1.6) does
    // (for each newaccumulator: extract it, accumulators[0] = newaccumulator); jqjs extracted the last value only, and
    // extracted the old state again when the update gave none.
    // What foreach gives is read outside it, where its variable is not bound (jackson-jq's ForeachExpression binds it
    // in a child scope, for the update and the extract only): `1 as $x | foreach (5, 6) as $x (0; . + $x) | $x` gave 5, 6.
    why: "destructuring: binding a pattern in `foreach`; each update value is extracted, and read without the binding",
    find: "                conf.variables[this.name] = v\n                for (let a of this.update.apply(accum, conf))\n                    accum = a\n                for (let e of this.extract.apply(accum, conf))\n                    yield e;\n            }\n            delete conf.variables[this.name]",
    // The names' values are put back around each value given out inline, not through a generator and closures per value
    // (those cost a third of what a foreach could run within the budget).
    replace: "                const names = __bindingNames(this)\n                const outer = __readNames(names, conf.variables)\n                try {\n                    for (const _ of __bind(this.name, v, conf)) {\n                        for (let a of this.update.apply(accum, conf)) {\n                            accum = a\n                            for (let e of this.extract.apply(a, conf)) {\n                                const inner = __readNames(names, conf.variables)\n                                __putNames(names, outer, conf.variables)\n                                try {\n                                    yield e\n                                } finally {\n                                    __putNames(names, inner, conf.variables)\n                                }\n                            }\n                        }\n                    }\n                } finally {\n                    __putNames(names, outer, conf.variables)\n                }\n            }",
  },
  {
    // `.headers."content-type"` piped `.headers` into `.` and then into the string: it gave "content-type". jq reads
    // `."key"` (and `."a\(x)"`) as `.["key"]`, so `.a."b"` is `.a["b"]`, its key evaluated on the same input.
    why: "`.\"key\"` indexes by a quoted key",
    find: "        } else if (t.type == 'dot') {\n            ret.push(new IdentityNode())",
    replace:
      "        } else if (t.type == 'dot' && tokens[i+1] && (tokens[i+1].type == 'quote' || tokens[i+1].type == 'quote-interp')) {\n            let key\n            if (tokens[i+1].type == 'quote') {\n                key = new StringNode(tokens[i+1].value)\n                i++\n            } else\n                ({q: key, i} = parseStringInterpolation(tokens, i + 1))\n            if (ret.length)\n                ret = [new IndexNode(makeFilterNode(ret), key)]\n            else\n                ret.push(new GenericIndex(key))\n        } else if (t.type == 'dot') {\n            ret.push(new IdentityNode())",
  },
  {
    // jq reads a missing path as null: `{} | .b += 1` is {"b": 1}, `.n |= (. // 0) + 1` counts from 0 and `.a.b |= 1`
    // makes `.a`. jqjs read undefined ("type mismatch in +:undefined and number") and failed below a missing key;
    // `.[0] |= empty` left a null in the array. A slice (`.[1:] |= map(. * 2)`) is read and replaced as getpath and
    // setpath do; jqjs indexed the array with the slice's object.
    why: "an update reads a missing path as null and makes the objects and arrays above it, and updates slices",
    find: "    // Pluck the value at a path out of an object\n    get(obj, p) {\n        let o = obj\n        for (let i of p) {\n            if (o === null) return null;\n            o = o[i]\n        }\n        return o\n    }\n    // Set the value at path p to v in obj,\n    // or delete the key if del is true.\n    update(obj, p, v, del=false) {\n        if (obj === null && !del)\n            obj = {}\n        else if (obj === null)\n            return obj;\n        let o = obj\n        let last = p.pop()\n        for (let i of p)\n            o = o[i]\n        if (typeof last == 'undefined')\n            return v\n        o[last] = v\n        if (del)\n            delete o[last]\n        return obj\n    }",
    replace:
      "    // Pluck the value at a path out of an object\n    get(obj, p) {\n        if (p.some(__isSliceKey))\n            return __getPath(obj, p)\n        let o = obj\n        for (let i of p) {\n            if (o === null) return null;\n            i = __updateKey(o, i)\n            o = Object.hasOwn(o, i) ? o[i] ?? null : null\n        }\n        return o\n    }\n    // Set the value at path p to v in obj,\n    // or delete the key if del is true.\n    update(obj, p, v, del=false) {\n        if (p.length == 0)\n            return v\n        if (p.some(__isSliceKey))\n            return del ? __deletePaths(obj, [p]) : __setPath(obj, p, 0, v)\n        if (obj === null && del)\n            return obj\n        if (obj === null)\n            obj = typeof p[0] == 'number' ? [] : {}\n        let o = obj\n        for (let n = 0; n < p.length - 1; n++) {\n            let i = __updateKey(o, p[n])\n            let next = Object.hasOwn(o, i) ? o[i] : null\n            if (next === null) {\n                if (del)\n                    return obj\n                next = typeof p[n + 1] == 'number' ? [] : {}\n                __setKey(o, i, next)\n            }\n            o = next\n        }\n        let last = __updateKey(o, p[p.length - 1])\n        if (!del)\n            __setKey(o, last, v)\n        else if (Array.isArray(o))\n            o.splice(last, 1)\n        else\n            delete o[last]\n        return obj\n    }",
  },
  {
    // `a = b` walked its path with `in` and set with `=`: `.["__proto__"]["x"] = 1` followed the inherited __proto__ to
    // the sandbox's Object.prototype and changed it for every later filter. Own properties only, set as data, and a
    // missing step made as jq makes it (an array before a number), as updates do.
    why: "`=` follows and sets own properties only, and assigns slices",
    find: "    update(obj, p, v) {\n        if (obj === null)\n            obj = {}\n        let o = obj\n        let last = p.pop()\n        for (let i of p) {\n            if (!(i in o)) {\n                o[i] = {}\n                o = o[i]\n            } else\n                o = o[i]\n        }\n        if (typeof last == 'undefined')\n            return v\n        o[last] = v\n        return obj\n    }",
    replace:
      "    update(obj, p, v) {\n        if (p.length == 0)\n            return v\n        if (p.some(__isSliceKey))\n            return __setPath(obj, p, 0, v)\n        if (obj === null)\n            obj = typeof p[0] == 'number' ? [] : {}\n        let o = obj\n        for (let n = 0; n < p.length - 1; n++) {\n            let i = __updateKey(o, p[n])\n            let next = Object.hasOwn(o, i) ? o[i] : null\n            if (next === null) {\n                next = typeof p[n + 1] == 'number' ? [] : {}\n                __setKey(o, i, next)\n            }\n            o = next\n        }\n        __setKey(o, __updateKey(o, p[p.length - 1]), v)\n        return obj\n    }",
  },
  {
    // jqjs negated a number literal only: `-.`, `-.a` and `-(…)` parsed as an operator with nothing on its left and
    // gave nothing, so `map(-.)` was [] and `sort_by(-.)` did not sort; `1 - -1` gave nothing too.
    why: "unary minus negates any operand: -., -.a, -(1, 2), 1 - -.x",
    find: "            if (ret.length == 0 && t.op == '-' && tokens[i+1].type == 'number') {\n                tokens[i+1].value = -tokens[i+1].value\n                t = tokens[++i]\n                continue\n            }\n            let lhs = makeFilterNode(ret)\n            let op = t.op\n            let stream = [lhs, t]\n            let r = parse(tokens, i + 1, ['op', 'comma', 'pipe', 'right-paren',\n                'right-brace', 'right-square', '<end-of-program>'].concat(until))\n            i = r.i\n            stream.push(r.node)\n            while (i < tokens.length && tokens[i].type == 'op') {\n                stream.push(tokens[i])\n                let r = parse(tokens, i + 1, ['op', 'comma', 'pipe',\n                    'right-paren', 'right-brace', 'right-square', '<end-of-program>'].concat(until))",
    replace:
      "            if (ret.length == 0 && t.op == '-' && tokens[i+1].type == 'number') {\n                tokens[i+1].value = -tokens[i+1].value\n                t = tokens[++i]\n                continue\n            }\n            if (ret.length == 0 && t.op == '-') {\n                let r = __parseOperand(tokens, i, ['op', 'comma', 'pipe', 'right-paren',\n                    'right-brace', 'right-square', '<end-of-program>'].concat(until))\n                ret.push(r.node)\n                i = r.i\n                t = tokens[i]\n                continue\n            }\n            let lhs = makeFilterNode(ret)\n            let op = t.op\n            let stream = [lhs, t]\n            let r = __parseOperand(tokens, i + 1, ['op', 'comma', 'pipe', 'right-paren',\n                'right-brace', 'right-square', '<end-of-program>'].concat(until))\n            i = r.i\n            stream.push(r.node)\n            while (i < tokens.length && tokens[i].type == 'op') {\n                stream.push(tokens[i])\n                let r = __parseOperand(tokens, i + 1, ['op', 'comma', 'pipe',\n                    'right-paren', 'right-brace', 'right-square', '<end-of-program>'].concat(until))",
  },
  {
    // jqjs drops the brackets around an expression: (def f: 1;) was a program of defs only, run as . (see
    // __compileProgram), where jq 1.6 refuses it as a missing expression. The mark keeps them apart.
    why: "defs alone in brackets are no program of defs only",
    find: "            let r = parse(tokens, i + 1, ['right-paren'])\n            ret.push(r.node)",
    replace: "            let r = parse(tokens, i + 1, ['right-paren'])\n            if (r.node instanceof __DefNode)\n                r.node.bracketed = true\n            ret.push(r.node)",
  },
  {
    // jqjs read any four characters after \u as hexadecimal digits ("\uZZZZ" was a NUL, "\u12" swallowed the closing
    // quote) and kept a lone surrogate ("\ud800"); jq 1.6 refuses those at compile time (see __unicodeEscape).
    why: "a \\u escape takes four hexadecimal digits, and a high surrogate its low one",
    find: "                    else if (q == 'u') uniEsc = 4",
    replace: "                    else if (q == 'u') {\n                        let u = __unicodeEscape(str, i + 1, location)\n                        tok += u.text\n                        i = u.last\n                    }",
  },
  {
    // jqjs stopped a number at its exponent: `1e3` was 1 followed by a call to e3, which failed only when it ran.
    why: "number literals take an exponent: 1e3, 2.5E-3, 1e+2",
    find: "            while (isDigit(str[i]) || str[i] == '.')\n                tok += str[i++]\n            ret.push({type: 'number', value: Number.parseFloat(tok), location})",
    replace:
      "            while (isDigit(str[i]) || str[i] == '.')\n                tok += str[i++]\n            if ((str[i] == 'e' || str[i] == 'E') && (isDigit(str[i+1]) || ((str[i+1] == '+' || str[i+1] == '-') && isDigit(str[i+2])))) {\n                tok += str[i++] + str[i++]\n                while (isDigit(str[i]))\n                    tok += str[i++]\n            }\n            ret.push({type: 'number', value: Number.parseFloat(tok), location})",
  },
  {
    // jq's `.a += E` is `E as $x | .a |= . + $x`: E reads the whole input, once per value. jqjs ran `. + E` on the value
    // at the path, so `{n: 5} | .sum += .n` read `.sum.n` and gave {"n": 5, "sum": null}.
    why: "`lhs op= rhs` evaluates rhs on the input, not on the value being updated",
    find: "            rhs = shuntingYard([new IdentityNode(), {type: 'op', op: t.op},\n                rhs])\n            ret = [new UpdateAssignment(lhs, rhs)]",
    replace: "            ret = [new __ArithmeticUpdate(lhs, t.op, rhs)]",
  },
  {
    // jqjs sorted on the first value the key gave only; jq sorts on all of them (`sort_by(.a, .b)` is by [.a, .b]).
    why: "`sort_by(f)` sorts by every value f gives",
    find: "        let r = input.map(v => ({\n            key: key.apply(v, conf).next().value,\n            value: v\n        }))\n        r.sort((a, b) => compareValues(a.key, b.key))\n        yield r.map(a => a.value)",
    replace: "        let r = input.map(v => ({\n            key: Array.from(key.apply(v, conf)),\n            value: v\n        }))\n        r.sort((a, b) => compareValues(a.key, b.key))\n        yield r.map(a => a.value)",
  },
  {
    // jqjs escaped `<` before `&`, so `&lt;` became `&amp;lt;`. An apostrophe stays `&apos;`, as jq 1.6 and jackson-jq
    // (AtHtmlFunction) write it (jq 1.7 writes `&#39;`).
    why: "`@html` escapes each character once",
    find: "        return v.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(\n            /&/g, '&amp;').replace(/'/g, '&apos;').replace(/\"/g, '&quot;')",
    replace: "        return v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(\n            /'/g, '&apos;').replace(/\"/g, '&quot;')",
  },
  {
    why: "`@sh` quotes the string, not its type's name",
    find: "            return \"'\" + t.replace(/'/g, \"'\\\\''\")",
    replace: "            return \"'\" + v.replace(/'/g, \"'\\\\''\")",
  },
  {
    // jqjs read a quoted key only when it held no `\(…)`: `{"ref_\(.n)": 1}` was refused ("unexpected quote-interp").
    why: "an object key may be a string with interpolations",
    find: "        } else if (tokens[i].type == 'left-paren') {\n            // computed key: (.x | .y) : val",
    replace:
      "        } else if (tokens[i].type == 'quote-interp') {\n            let q = parseStringInterpolation(tokens, i)\n            i = q.i + 1\n            if (tokens[i].type != 'colon')\n                throw 'unexpected ' + tokens[i].type + ', expected colon at ' + describeLocation(tokens[i])\n            let r = parse(tokens, i + 1, ['comma', 'right-brace'])\n            i = r.i\n            fields.push({key: q.q, value: r.node})\n            i--\n        } else if (tokens[i].type == 'left-paren') {\n            // computed key: (.x | .y) : val",
  },
  {
    // jqjs gave Infinity (stored as null) for x / 0: a task computing an average of nothing completed with null.
    why: "division by zero is an error",
    find: "        if (lt == 'number' && rt == 'number')\n            return l / r",
    replace:
      "        if (lt == 'number' && rt == 'number') {\n            if (r === 0)\n                throw 'number (' + JSON.stringify(l) + ') and number (0) cannot be divided because the divisor is zero'\n            return l / r\n        }",
  },
  {
    // jq's remainder is of the integer parts (5.5 % 2 is 1), and zero as the divisor's is an error (jqjs gave NaN).
    why: "`%` works on integers and refuses a zero divisor",
    find: "        if (lt == 'number' && rt == 'number')\n            return l % r",
    replace:
      "        if (lt == 'number' && rt == 'number') {\n            if (Math.trunc(r) === 0)\n                throw 'number (' + JSON.stringify(l) + ') and number (' + JSON.stringify(r) + ') cannot be divided (remainder) because the divisor is zero'\n            return Math.trunc(l) % Math.trunc(r)\n        }",
  },
  {
    // jq refuses a variable nothing binds ("$x is not defined"); jqjs read it as null, so a misspelt variable quietly
    // gave null. The sandbox has no environment: $ENV is empty.
    why: "a variable nothing binds is an error",
    find: "    * apply(input, conf) {\n        yield conf.variables[this.name]\n    }",
    replace:
      "    * apply(input, conf) {\n        if (Object.hasOwn(conf.variables, this.name))\n            return yield conf.variables[this.name]\n        if (this.name == 'ENV')\n            return yield {}\n        if (this.name == '__loc__')\n            return yield {file: '<top-level>', line: 1}\n        throw '$' + this.name + ' is not defined'\n    }",
  },
  {
    // jqjs compared arrays over the left one's length only, so [1] and [1, 0] were equal: sort, unique, group_by, min
    // and max took them as the same value, and objects whose keys are a prefix of another's ({a} and {a, b}) were then
    // ordered by their values. jq orders a prefix first, as jackson-jq (JsonNodeComparator) does.
    why: "an array that is a prefix of another sorts before it",
    find: "            let c = compareValues(v1, v2)\n            if (c != 0) return c\n        }\n        return 0\n    } else if (at == 'object') {",
    replace: "            let c = compareValues(v1, v2)\n            if (c != 0) return c\n        }\n        return a.length - b.length\n    } else if (at == 'object') {",
  },
  {
    // jqjs looked a function's argument up by name in the callee's scope while it ran: in `def f: . * 2; map(f)` the
    // argument `f` found map's own parameter `f` (itself) and recursed until the stack overflowed, and a user's
    // function named like any builtin's parameter (f, w, p, …) could not be passed to it. jq's arguments are closures:
    // they run in the scope they were written in (see __callUserFunction).
    why: "a function's arguments run in their caller's scope",
    find: "    let ret = function*(input, conf, args) {\n        let origArgs = conf.userFuncArgs\n        conf.userFuncArgs = Object.create(origArgs)\n        for (let i = 0; i < params.length; i++) {\n            let pn = params[i]\n            let pv = args[i]\n            conf.userFuncArgs[pn + '/0'] = pv\n        }\n        yield* f(input, conf)\n        conf.userFuncArgs = origArgs\n    }",
    replace: "    let ret = function(input, conf, args) {\n        return __callUserFunction(params, f, input, conf, args)\n    }",
  },
  {
    // jqjs put each def in its one table of functions as it parsed it: a def was seen everywhere after (and before) it,
    // in other scopes too ((def f: 2; f), f gave 2 twice), and its body ran with the variables and parameters of the
    // call (1 as $x | def f: $x; 2 as $x | f gave 2). jq binds a def where it is written: it is seen by the rest of its
    // scope only, and its body sees the names around it there (see __DefNode). A `$name` parameter is also the filter
    // `name`, as in jq (def f($a): a).
    why: "a def is bound where it is written, for the rest of its scope",
    find: "                    if (tokens[i].type == 'variable') { // def foo($f), translated to a pipe to that variable\n                        varParams.push({truename: '$inner' + params.length + '/0', bindname: tokens[i].name});\n                        params.push('$inner' + params.length)",
    replace: "                    if (tokens[i].type == 'variable') { // def foo($f), translated to a pipe to that variable\n                        varParams.push({truename: tokens[i].name + '/0', bindname: tokens[i].name});\n                        params.push(tokens[i].name)",
  },
  {
    // jq's def f($a; $b): body is def f(a; b): a as $a | b as $b | body, the first parameter's values the outer loop;
    // jqjs wrapped the body in the order given, so the last was outermost: [f(1, 2; 3, 4)] varied $a fastest.
    why: "`def f($a; $b)` binds $a around $b",
    find: "            for (let vp of varParams) {\n                let lhs = new VariableBinding(new FunctionCall(vp.truename, []), vp.bindname);",
    replace: "            for (let vp of varParams.slice().reverse()) {\n                let lhs = new VariableBinding(new FunctionCall(vp.truename, []), vp.bindname);",
  },
  {
    why: "a def is bound where it is written, for the rest of its scope (its node)",
    find: "            let func = makeUserFuncFromNode(params, node);\n            functions[name + '/' + params.length] = func;\n            let pathFunc = makeUserFuncFromNode(params, node, true);\n            functions[name + '/' + params.length + '-paths'] = pathFunc;\n            i = j;",
    replace: "            let rest = parse(tokens, j + 1, until)\n            ret.push(new __DefNode(name + '/' + params.length, params, node, rest.node))\n            i = rest.i\n            if (tokens[i] && until.indexOf(tokens[i].type) != -1)\n                i--",
  },
  {
    // jqjs tested the token after `$x` for the type ',' (a comma's type is 'comma'), so `{$a, $b}` and `{$a, b: 1}` were
    // refused ("unexpected comma, expected colon"): only a last `$x` was read as `x: $x`.
    why: "`{$a, $b}` is `{a: $a, b: $b}`",
    find: "            } else if (tokens[i].type == ',' || tokens[i].type == 'right-brace') {\n                // variable key-value: { $x } -> { \"x\": $x }",
    replace: "            } else if (tokens[i].type == 'comma' || tokens[i].type == 'right-brace') {\n                // variable key-value: { $x } -> { \"x\": $x }",
  },
  {
    // jq reads `{"a b"}` as `{"a b": .["a b"]}`, as it reads `{a}`; jqjs wanted a colon.
    why: "`{\"key\"}` is `{\"key\": .key}`",
    find: "            // quoted-string key: \"x\" : val\n            let ident = tokens[i++]\n            if (tokens[i].type == 'colon') {",
    replace: "            // quoted-string key: \"x\" : val\n            let ident = tokens[i++]\n            if (tokens[i].type == 'comma' || tokens[i].type == 'right-brace') {\n                fields.push({\n                    key: new StringNode(ident.value),\n                    value: new IdentifierIndex(ident.value),\n                })\n                i--\n            } else if (tokens[i].type == 'colon') {",
  },
  {
    // jq (and jackson-jq) name the value: "Cannot iterate over null (null)", the usual error of .items[] on a missing
    // field; jqjs wrote "cannot iterate over null".
    why: "`E[]` on a non-container names the value as jq does",
    find: "            if (!['array', 'object'].includes(nameType(o)))\n                throw 'cannot iterate over ' + nameType(o)",
    replace: "            if (!['array', 'object'].includes(nameType(o)))\n                throw 'Cannot iterate over ' + __described(o)",
  },
  {
    why: "`.[]` on a non-container names the value as jq does",
    find: "        if (!['array', 'object'].includes(nameType(input)))\n            throw 'cannot iterate over ' + nameType(input)",
    replace: "        if (!['array', 'object'].includes(nameType(input)))\n            throw 'Cannot iterate over ' + __described(input)",
  },
  {
    why: "`add` adds an object's values, as jq's does",
    find: "    'add/0': function*(input, conf) {\n        if (nameType(input) != 'array')",
    replace: "    'add/0': function*(input, conf) {\n        if (nameType(input) == 'object')\n            input = Object.values(input)\n        if (nameType(input) != 'array')",
  },
];

/**
 * jqjs's source (`@michaelhomer/jqjs/jq.js`) made the sandbox's script: see {@link FIXES}, then {@link JQ_SANDBOX_ADDITIONS}.
 * Throws when a fix does not apply.
 */
export function jqSandboxSource(jqjs: string): string {
  let source = jqjs;
  for (const fix of FIXES) {
    const at = source.indexOf(fix.find);
    if (at < 0 || source.indexOf(fix.find, at + 1) >= 0) throw new Error(`jqjs's source has changed: the fix "${fix.why}" does not apply once`);
    source = source.slice(0, at) + fix.replace + source.slice(at + fix.find.length);
  }
  // After the fixes, so that no fix can find its text in the additions; they run before any filter is compiled.
  return `${source}\n${JQ_SANDBOX_ADDITIONS}`;
}
