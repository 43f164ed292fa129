/**
 * What the jq sandbox adds to jqjs's source, appended to it (see sandbox-source.ts): the pieces of jq that jqjs 1.6.0
 * lacks (`try`/`catch` and `error`, `label`/`break`, destructuring, `strftime` and other builtins) and replacements
 * for builtins it gets wrong. Plain JavaScript run by QuickJS after jqjs's own code, so jqjs's names are in scope:
 * `functions`, `formats`, `ParseNode`, `parse`, `sub`, `nameType`, `makeFlagString`, `KEYWORDS`, `describeLocation`
 * and `defineShorthandFunction`. The parser's own changes (the `try` keyword, `label`, patterns after `as`) are text
 * fixes there. Dates are UTC: the sandbox has no time zone.
 */
export const JQ_SANDBOX_ADDITIONS = String.raw`
// --- Errors: jq's error values, and what try/catch and ? may catch ---

class JqError extends Error {
    constructor(value) {
        super(typeof value == 'string' ? value : JSON.stringify(value) + ' (not a string)')
        this.value = value
    }
}

// The message a jq error carries: the value given to error, jqjs's own message (it throws strings), or a JavaScript
// error's. QuickJS's InternalError (the budget's interrupt, out of memory, stack overflow) is never caught: it must
// end the run.
function caughtJqError(e) {
    if (e instanceof JqError) return e.value
    if (typeof e == 'string') return e
    if (e instanceof Error && e.name != 'InternalError') return e.message
    throw e
}

class TryNode extends ParseNode {
    constructor(body, handler) {
        super()
        this.body = body
        this.handler = handler
    }
    * apply(input, conf) {
        let caught
        try {
            for (let o of this.body.apply(input, conf))
                yield o
            return
        } catch (e) {
            caught = caughtJqError(e)
        }
        if (this.handler) yield* this.handler.apply(caught, conf)
    }
    * paths(input, conf) {
        let caught
        try {
            yield* this.body.paths(input, conf)
            return
        } catch (e) {
            caught = caughtJqError(e)
        }
        // The handler runs on the message as in jq, where what it gives is no path of the input and its errors are
        // raised: it was skipped, so (try error("x") catch .) |= 1 quietly changed nothing.
        if (this.handler) yield* __noPaths.call(this.handler, caught, conf)
    }
    toString() {
        return 'try ' + this.body + (this.handler ? ' catch ' + this.handler : '')
    }
}

// The handler after catch, as jq 1.6's grammar reads it: a term with its suffixes (a leading - too), so that an operator
// after it applies to the whole try: try error("a") catch . + "b" is (try error("a") catch .) + "b", and try 1 catch
// . + 1 is 2 (it was 1: the handler took . + 1). A binding there runs to the end of the enclosing expression (until), over
// commas and pipes, as in jq: try 1 catch . as $x | $x + 1 is 1, [try error("a") catch . as $x | $x, $x] ["a", "a"].
function __parseCatchHandler(tokens, i, ends, until) {
    const term = __parseOperand(tokens, i, ends.concat(__TRY_TERM_ENDS))
    return __parseBindingAfter(term, tokens, ['<end-of-program>'].concat(until))
}

// The body of try, as jq 1.6's grammar reads it: a term with its suffixes, as the handler, so that an operator after it
// applies to the whole try: try 1 + error("x") is (try 1) + error("x"), which raises x (the body ran to the next pipe
// or comma, and caught it), and try 1 + 2 catch 3 is refused. A binding in it runs over commas and pipes to the catch,
// as in jq (try . as $x | $x | error("a") catch 5 is 5).
function __parseTryBody(tokens, i, ends, until) {
    const body = __parseOperand(tokens, i, ['catch'].concat(ends, __TRY_TERM_ENDS))
    return __parseBindingAfter(body, tokens, ['catch', '<end-of-program>'].concat(until))
}

// What ends a try's body or handler besides the end of the enclosing expression: any binary operator (and, or and //
// are 'op' tokens too) or assignment.
const __TRY_TERM_ENDS = ['op', 'equals', 'pipe-equals', 'op-equals']

// When parsed (a {node, i} that stopped at as) is the source of a binding: E as pattern | body, body running up to
// stops (the end of the enclosing expression); else parsed.
function __parseBindingAfter(parsed, tokens, stops) {
    if (!tokens[parsed.i] || tokens[parsed.i].type != 'as')
        return parsed
    const bound = __parsePattern(tokens, parsed.i + 1)
    if (!tokens[bound.i] || tokens[bound.i].type != 'pipe')
        throw 'expected | after the pattern at ' + describeLocation(tokens[bound.i])
    const body = parse(tokens, bound.i + 1, stops)
    return {node: new PipeNode(new VariableBinding(parsed.node, bound.pattern), body.node), i: body.i}
}

// --- label $name | ... break $name: stops the label's outputs, keeping those before ---

// Not an Error, so that try and ? (caughtJqError) let it through to its label. label is the label's name, instance the
// run of a label $name it breaks (see __labelled).
class BreakSignal {
    constructor(label, instance) {
        this.label = label
        this.instance = instance
        this.message = '$*label-' + label + ' is not defined'
    }
}

// The variable a label binds for its body, as jq 1.6 binds $*label-name: a name no filter can write.
function __labelKey(label) {
    return '*label-' + label
}

// The values (of = 'apply') or paths (of = 'paths') of a label's body, up to a break of this run of the label. Each run
// is its own label, bound as a variable is (the body sees it, and the defs and closures written in it; its consumer
// sees the one outside): a break written outside a function and passed into it (def f(g): label $a | g; label $a |
// f(break $a)) ends the label it was written in, where a label of the same name inside the function caught it.
function* __labelled(node, input, conf, of) {
    const key = __labelKey(node.label)
    const instance = {}
    const vars = conf.variables
    const outerBound = Object.hasOwn(vars, key)
    const outer = vars[key]
    // Inline rather than through a helper around each step, as bindings are (see __bindingPipeGiveOne).
    try {
        vars[key] = instance
        for (const value of node.body[of](input, conf)) {
            if (outerBound)
                vars[key] = outer
            else
                delete vars[key]
            yield value
            vars[key] = instance
        }
    } catch (e) {
        if (!(e instanceof BreakSignal && e.instance === instance))
            throw e
    } finally {
        if (outerBound)
            vars[key] = outer
        else
            delete vars[key]
    }
}

class LabelNode extends ParseNode {
    constructor(label, body) {
        super()
        this.label = label
        this.body = body
    }
    apply(input, conf) {
        return __labelled(this, input, conf, 'apply')
    }
    // A path runs through a label, as jackson-jq's PipedQuery passes it on past a LabelPipeComponent (and jq 1.6):
    // del(label $out | .items[] | if .last then ., break $out else . end) failed with "not a function".
    paths(input, conf) {
        return __labelled(this, input, conf, 'paths')
    }
    toString() {
        return 'label $' + this.label + ' | ' + this.body
    }
}

class BreakNode extends ParseNode {
    constructor(label) {
        super()
        this.label = label
    }
    * apply(input, conf) {
        throw new BreakSignal(this.label, conf.variables[__labelKey(this.label)])
    }
    * paths(input, conf) {
        throw new BreakSignal(this.label, conf.variables[__labelKey(this.label)])
    }
    toString() {
        return 'break $' + this.label
    }
}

// --- Destructuring: E as [$a, {b: $c, $d, (expr): $e}] | ..., in reduce and foreach too ---
// A pattern is a variable's name, {kind: 'array', items} or {kind: 'object', entries: [{key | keyNode, name?, sub?}]}.

// The pattern after as, reduce … as or foreach … as, and the index after it. jq 1.6's destructuring alternatives
// (E as [$a] ?// $a | …) are refused: jackson-jq, Conductor's jq, has no ?// in its grammar (its Matcher is one
// pattern), and jqjs read the ? and // as operators after the binding, so the filter ran and gave other values
// (or "$a is not defined") where jq 1.6 tries the next pattern.
function __parsePattern(tokens, i) {
    const bound = __parsePatternPart(tokens, i)
    const next = tokens[bound.i]
    if (next && next.type == 'question' && tokens[bound.i + 1] && tokens[bound.i + 1].type == 'op' && tokens[bound.i + 1].op == '//')
        throw "destructuring alternatives (?//) are not supported, as in jackson-jq (Conductor's jq): bind one pattern, or test the value's type with if ... then ... else ... end"
    return bound
}

function __parsePatternPart(tokens, i) {
    const t = tokens[i]
    if (t && t.type == 'variable')
        return {pattern: t.name, i: i + 1}
    if (t && t.type == 'left-square') {
        const items = []
        i++
        for (;;) {
            const r = __parsePatternPart(tokens, i)
            items.push(r.pattern)
            i = r.i
            if (tokens[i] && tokens[i].type == 'comma') { i++; continue }
            if (tokens[i] && tokens[i].type == 'right-square') return {pattern: {kind: 'array', items}, i: i + 1}
            throw 'expected , or ] in an array pattern at ' + describeLocation(tokens[i])
        }
    }
    if (t && t.type == 'left-brace') {
        const entries = []
        i++
        for (;;) {
            const k = tokens[i]
            let entry
            if (k && k.type == 'variable') {
                entry = {key: k.name, name: k.name}
                i++
            } else if (k && (k.type == 'identifier' || k.type == 'quote' || KEYWORDS.includes(k.type))) {
                entry = {key: k.value}
                i++
            } else if (k && k.type == 'left-paren') {
                const r = parse(tokens, i + 1, ['right-paren'])
                entry = {keyNode: r.node}
                i = r.i + 1
            } else
                throw 'expected a key in an object pattern at ' + describeLocation(k)
            if (tokens[i] && tokens[i].type == 'colon') {
                const r = __parsePatternPart(tokens, i + 1)
                entry.sub = r.pattern
                i = r.i
            } else if (entry.name === undefined)
                throw 'expected : after a key in an object pattern at ' + describeLocation(tokens[i])
            entries.push(entry)
            if (tokens[i] && tokens[i].type == 'comma') { i++; continue }
            if (tokens[i] && tokens[i].type == 'right-brace') return {pattern: {kind: 'object', entries}, i: i + 1}
            throw 'expected , or } in an object pattern at ' + describeLocation(tokens[i])
        }
    }
    throw 'expected a variable name or a pattern after as at ' + describeLocation(t)
}

// Binds pattern's variables to the parts of value, yielding once per binding (a key expression may give several).
// As in jackson-jq (PipedQuery, ObjectMatcher) and jq 1.6: a key expression reads the names as they are outside the
// pattern, not as the pattern has bound them so far ("z" as $a | {"a": "b", "b": 5} as {$a, ($a): $c} gave $c = 5 where
// jq reads .z), and a name the pattern binds twice keeps its first match ({a: $x, b: $x} bound the b's).
function* __bind(pattern, value, conf) {
    if (typeof pattern == 'string') {
        conf.variables[pattern] = value
        return yield
    }
    const names = __patternNames(pattern)
    const outer = __readNames(names, conf.variables)
    for (const matched of __match(pattern, value, conf, [])) {
        for (let i = matched.length - 1; i >= 0; i--)
            conf.variables[matched[i][0]] = matched[i][1]
        yield
        __putNames(names, outer, conf.variables)
    }
}

// The [name, value] pairs of each way pattern matches value, appended to matched (given out as it is, then taken
// back); nothing is bound meanwhile.
function* __match(pattern, value, conf, matched) {
    if (typeof pattern == 'string') {
        matched.push([pattern, value])
        yield matched
        matched.pop()
        return
    }
    if (pattern.kind == 'array') {
        if (value !== null && !Array.isArray(value))
            throw 'Cannot index ' + nameType(value) + ' with number'
        yield* __matchEach(pattern.items.map((p, n) => [p, value === null || value[n] === undefined ? null : value[n]]), 0, conf, matched)
        return
    }
    if (value !== null && nameType(value) != 'object')
        throw 'Cannot index ' + nameType(value) + ' with a key of an object pattern'
    yield* __matchEntries(pattern.entries, 0, value, conf, matched)
}

function* __matchEach(pairs, n, conf, matched) {
    if (n == pairs.length)
        return yield matched
    for (const _ of __match(pairs[n][0], pairs[n][1], conf, matched))
        yield* __matchEach(pairs, n + 1, conf, matched)
}

function* __matchEntries(entries, n, value, conf, matched) {
    if (n == entries.length)
        return yield matched
    const entry = entries[n]
    for (const key of entry.keyNode ? entry.keyNode.apply(value, conf) : [entry.key]) {
        if (typeof key != 'string')
            throw 'Cannot index object with ' + nameType(key)
        // Own keys only: "constructor" is not Object's.
        const field = value !== null && Object.hasOwn(value, key) ? value[key] : null
        const size = matched.length
        if (entry.name !== undefined)
            matched.push([entry.name, field])
        if (entry.sub === undefined)
            yield* __matchEntries(entries, n + 1, value, conf, matched)
        else
            for (const _ of __match(entry.sub, field, conf, matched))
                yield* __matchEntries(entries, n + 1, value, conf, matched)
        matched.length = size
    }
}

// The names a pattern binds.
function __patternNames(pattern) {
    if (typeof pattern == 'string')
        return [pattern]
    if (pattern.kind == 'array')
        return pattern.items.flatMap(__patternNames)
    return pattern.entries.flatMap(e => [...(e.name !== undefined ? [e.name] : []), ...(e.sub !== undefined ? __patternNames(e.sub) : [])])
}

// What the names a pattern binds stand for now, and a function that puts that back once its binding's scope ends:
// jqjs deleted them, so in 1 as $x | (2 as $x | $x), $x the outer $x read null after the inner one's scope.
function __saveBindings(pattern, conf) {
    const saved = __patternNames(pattern).map(name => [name, Object.hasOwn(conf.variables, name), conf.variables[name]])
    return () => {
        for (const [name, bound, value] of [...saved].reverse()) {
            if (bound)
                conf.variables[name] = value
            else
                delete conf.variables[name]
        }
    }
}

// --- Updates (|=, +=, …): the key of a path's step, checked as jq checks it, and set without touching a prototype ---

function __updateKey(o, k) {
    const t = nameType(o)
    const shown = typeof k == 'string' ? JSON.stringify(k) : nameType(k)
    if (t == 'array') {
        if (typeof k != 'number')
            throw 'Cannot index array with ' + shown
        if (k < 0)
            k += o.length
        if (k < 0)
            throw 'Out of bounds negative array index'
        return Math.floor(k)
    }
    if (t == 'object') {
        if (typeof k != 'string')
            throw 'Cannot index object with ' + shown
        return k
    }
    throw 'Cannot index ' + t + ' with ' + shown
}

// --- |= and = copy only what they change: jqjs deep-copied the whole input (JSON.parse(JSON.stringify(…))) at every
// assignment, so reduce .[] as $r ({}; .[$r.id] = $r) over 5,000 rows copied every row kept so far at every row, about
// 20 s under Node, all of it native and so unseen by the budget. Now each container along an assigned path is copied
// once per assignment (copy on write) and the rest is shared, as jq's values are immutable; the paths are taken from
// the input as it was, as jq's _modify takes them (reduce path(paths) as $p (.; …)). ---

// A shallow copy of an array or object, made in interpreted code so that the budget counts it: an array's slice() is
// native and unseen, so reduce range(30000) as $i ([]; .[$i] = $i), which copies the accumulator at every row, ran for
// over 10 s without reaching the budget.
function __ownCopy(container) {
    if (!Array.isArray(container))
        return __addKeys({}, container)
    const copy = []
    for (let i = 0; i < container.length; i++)
        copy.push(container[i])
    return copy
}

// root with each container on the way to p's last step made its own shallow copy (once per assignment: fresh holds the
// copies made), so that update's writes along p touch nothing shared. Stops where the path leaves what exists.
function __ownPath(root, p, fresh) {
    if (root === null || typeof root != 'object')
        return root
    if (!fresh.has(root)) {
        root = __ownCopy(root)
        fresh.add(root)
    }
    let o = root
    for (let n = 0; n < p.length - 1; n++) {
        const k = p[n]
        let i
        if (Array.isArray(o) && typeof k == 'number')
            i = k < 0 ? o.length + Math.floor(k) : Math.floor(k)
        else if (!Array.isArray(o) && typeof k == 'string')
            i = k
        else
            break
        if (!Object.hasOwn(o, i))
            break
        let child = o[i]
        if (child === null || typeof child != 'object')
            break
        if (!fresh.has(child)) {
            child = __ownCopy(child)
            fresh.add(child)
            __setKey(o, i, child)
        }
        o = child
    }
    return root
}

// The copies at or below value stop counting as this assignment's own: the update's value may hold one of them twice
// ((.a.x, .a, .a.m.z) |= {m: ., n: .} puts the copy of .a at .a.m and .a.n), so a later path writing into one must copy
// it again rather than change both. Only copies are walked, each forgotten once, so this stays linear in the copies made.
function __forgetOwn(value, fresh) {
    if (!fresh.has(value))
        return
    const stack = [value]
    fresh.delete(value)
    while (stack.length > 0) {
        const o = stack.pop()
        for (const k of Object.keys(o)) {
            const child = o[k]
            if (child !== null && typeof child == 'object' && fresh.has(child)) {
                fresh.delete(child)
                stack.push(child)
            }
        }
    }
}

UpdateAssignment.prototype.apply = function*(input, conf) {
    const fresh = new Set()
    let out = input
    for (const p of this.l.paths(input, conf)) {
        out = __ownPath(out, p, fresh)
        const old = this.get(out, p)
        const it = this.r.apply(old, conf).next()
        __forgetOwn(old, fresh)
        out = it.done ? this.update(out, p, null, true) : this.update(out, p, it.value)
    }
    yield out
}

PlainAssignment.prototype.apply = function*(input, conf) {
    for (const v of this.r.apply(input, conf)) {
        const fresh = new Set()
        let out = input
        for (const p of this.l.paths(input, conf))
            out = this.update(__ownPath(out, p, fresh), p, v)
        yield out
    }
}

// lhs op= rhs: for each value $x of rhs on the input, the input with lhs |= . op $x.
class __ArithmeticUpdate extends ParseNode {
    constructor(lhs, op, rhs) {
        super()
        this.lhs = lhs
        this.op = op
        this.rhs = rhs
    }
    * apply(input, conf) {
        for (const x of this.rhs.apply(input, conf)) {
            const update = shuntingYard([new IdentityNode(), {type: 'op', op: this.op}, new ValueNode(x)])
            yield* new UpdateAssignment(this.lhs, update).apply(input, conf)
        }
    }
    toString() {
        return this.lhs + ' ' + this.op + '= ' + this.rhs
    }
}

// An index past an array's end pads it with nulls first, as jq and jackson-jq (ArrayIndexPath.mutate) do: set alone, it
// left holes, which tostring wrote as "undefined" and . == null did not take for null.
function __setKey(o, k, v) {
    if (Array.isArray(o)) {
        while (o.length < k)
            o.push(null)
        o[k] = v
    } else
        Object.defineProperty(o, k, {value: v, writable: true, enumerable: true, configurable: true})
}

// --- setpath: value (not changed) with path set to v, making what is missing as jq does (jqjs wrote a missing last
// key into a detached object, so {} | setpath(["a"]; 1) was {}) ---

// A slice key ({"start": …, "end": …}, as path(.[1:]) gives) over an array of \`length\`: its bounds as jq's parse_slice
// takes them (negative from the end, clamped, the end rounded up), or undefined for any other key.
function __sliceBounds(key, length) {
    if (nameType(key) != 'object' || !Object.hasOwn(key, 'start') || !Object.hasOwn(key, 'end'))
        return undefined
    const bound = (b, none) => {
        if (b === null)
            return none
        if (typeof b != 'number')
            throw 'Start and end indices of an array slice must be numbers'
        return Math.min(Math.max(b < 0 ? b + length : b, 0), length)
    }
    const start = Math.floor(bound(key.start, 0))
    return {start, end: Math.max(start, Math.ceil(bound(key.end, length)))}
}

function __isSliceKey(key) {
    return nameType(key) == 'object'
}

// getpath's walk (see getpath/1).
function __getPath(input, path) {
    let value = input
    for (let key of path) {
        if (value === null)
            break
        const t = nameType(value)
        const slice = t == 'array' ? __sliceBounds(key, value.length) : undefined
        if (slice !== undefined) {
            value = value.slice(slice.start, slice.end)
        } else if (t == 'object' && typeof key == 'string') {
            value = Object.hasOwn(value, key) ? value[key] : null
        } else if (t == 'array' && typeof key == 'number') {
            const index = key < 0 ? value.length + Math.floor(key) : Math.floor(key)
            value = index >= 0 && index < value.length ? value[index] : null
        } else {
            throw 'Cannot index ' + t + ' with ' + (typeof key == 'string' ? '"' + key + '"' : nameType(key))
        }
    }
    return value
}

function __setPath(value, path, i, v) {
    if (i == path.length)
        return v
    const key = path[i]
    // A slice is replaced by the array set there: .[1:] = [9] on [1, 2, 3] is [1, 9].
    const slice = value === null || Array.isArray(value) ? __sliceBounds(key, value === null ? 0 : value.length) : undefined
    if (slice !== undefined) {
        const array = value ?? []
        const replacement = __setPath(array.slice(slice.start, slice.end), path, i + 1, v)
        if (!Array.isArray(replacement))
            throw 'A slice of an array can only be assigned another array'
        return [...array.slice(0, slice.start), ...replacement, ...array.slice(slice.end)]
    }
    // A missing value becomes what the key indexes: an object for a name, an array (padded with nulls) for a number.
    const container = value === null ? (typeof key == 'number' ? [] : {}) : value
    const k = __updateKey(container, key)
    const out = Array.isArray(container) ? container.slice() : {}
    if (!Array.isArray(container))
        for (const name of Object.keys(container))
            __setKey(out, name, container[name])
    while (Array.isArray(out) && out.length < k)
        out.push(null)
    __setKey(out, k, __setPath(Object.hasOwn(container, k) ? container[k] : null, path, i + 1, v))
    return out
}

function __firstOrLast(found, last) {
    if (found === null)
        return null
    if (!Array.isArray(found))
        throw 'Cannot index ' + nameType(found) + ' with number'
    return found.length == 0 ? null : found[last ? found.length - 1 : 0]
}

// jq's indices: positions of a substring, of an element, or of a run of elements (an array needle), null on null.
function __indices(input, needle) {
    const t = nameType(input)
    if (t == 'null')
        return null
    if (t == 'string' && typeof needle == 'string') {
        const found = []
        if (needle.length == 0)
            return null
        for (let at = input.indexOf(needle); at >= 0; at = input.indexOf(needle, at + 1))
            found.push(at)
        return found
    }
    if (t == 'array') {
        const run = Array.isArray(needle) ? needle : [needle]
        const found = []
        if (run.length == 0)
            return found
        outer: for (let at = 0; at + run.length <= input.length; at++) {
            for (let j = 0; j < run.length; j++)
                if (compareValues(input[at + j], run[j]) != 0)
                    continue outer
            found.push(at)
        }
        return found
    }
    if (t == 'object' && typeof needle == 'string')
        return Object.hasOwn(input, needle) ? input[needle] : null
    throw 'Cannot index ' + t + ' with ' + (typeof needle == 'string' ? JSON.stringify(needle) : nameType(needle))
}

// --- delpaths and del: every path deleted at once, as jq's delpaths does (jqjs left a null in an array) ---

// Deletes paths (each non-empty) from value, which is not changed: the objects and arrays on the way are copied. A path
// through a missing key or null deletes nothing; a whole key deleted wins over deletions inside it.
function __deletePaths(value, paths) {
    const t = nameType(value)
    if (t == 'null')
        return null
    if (t != 'array' && t != 'object')
        throw 'Cannot delete fields from ' + t
    const whole = []
    const inner = new Map()
    for (const path of paths) {
        let key = path[0]
        if (path.length == 1) {
            whole.push(key)
            continue
        }
        key = __updateKey(value, key)
        if (!inner.has(key))
            inner.set(key, [])
        inner.get(key).push(path.slice(1))
    }
    const out = t == 'array' ? value.slice() : {}
    if (t == 'object')
        for (const k of Object.keys(value))
            __setKey(out, k, value[k])
    // A key deleted whole is not looked into: delpaths([["a"], ["a", "b"]]) on {"a": 1} is {}, not an error on 1. A Set,
    // found once: del((.[] | select(…)), .[].x) over a few thousand items compared each inner key with every whole one.
    const deletedWhole = new Set(t == 'array' ? whole.filter(w => typeof w == 'number').map(w => Math.floor(w < 0 ? w + out.length : w)) : whole)
    for (const [key, rest] of inner)
        if (Object.hasOwn(out, key) && out[key] !== null && !deletedWhole.has(key))
            out[key] = __deletePaths(out[key], rest)
    if (t == 'object') {
        for (const key of whole) {
            if (typeof key != 'string')
                throw 'Cannot delete ' + nameType(key) + ' field of object'
            delete out[key]
        }
        return out
    }
    const gone = new Set()
    for (const key of whole) {
        if (typeof key == 'number') {
            const k = Math.floor(key < 0 ? key + out.length : key)
            if (k < 0)
                throw 'Out of bounds negative array index'
            gone.add(k)
        } else if (key !== null && typeof key == 'object' && !Array.isArray(key)) {
            const bound = (b, otherwise) => {
                if (b === null || b === undefined) return otherwise
                if (typeof b != 'number') throw 'Start and end indices of an array slice must be numbers'
                if (b < 0) b += out.length
                return Math.min(Math.max(b, 0), out.length)
            }
            const end = Math.ceil(bound(key.end, out.length))
            for (let k = Math.floor(bound(key.start, 0)); k < end; k++)
                gone.add(k)
        } else
            throw 'Cannot delete ' + nameType(key) + ' element of array'
    }
    return out.filter((_, k) => !gone.has(k))
}

// --- Paths: a path expression indexes as its value would (path(.a) on a number is an error, which ? catches), so
// del(.. | .x?) deletes the x of every object and skips the numbers and strings .. passes through; jqjs made paths
// through them and delpaths then failed ("Cannot delete fields from number") ---

function __checkPathStep(value, key) {
    const t = nameType(value)
    if (t == 'null')
        return
    const shown = typeof key == 'string' ? JSON.stringify(key) : nameType(key)
    if (t == 'object' ? typeof key != 'string' : t == 'array' ? typeof key != 'number' && nameType(key) != 'object' : true)
        throw 'Cannot index ' + t + ' with ' + shown
}

// .[i] on a value of type t: jqjs gave null for .a on a number, a string or a boolean, where jq raises "Cannot index
// number with "a"" (which ?, try and // then catch); and an object's own key only (jqjs read inherited ones, so
// {} | .constructor was Object's constructor and .__proto__ the sandbox's Object.prototype, where jq answers null).
function __indexValue(value, t, i) {
    if (t != 'array' && t != 'object')
        throw 'Cannot index ' + t + ' with ' + JSON.stringify(i)
    if (t == 'array' && nameType(i) != 'number')
        throw 'Cannot index array with ' + nameType(i) + ' ' + JSON.stringify(i)
    if (t == 'object' && nameType(i) != 'string')
        throw 'Cannot index object with ' + nameType(i) + ' ' + JSON.stringify(i)
    const found = t == 'array' ? value[i < 0 ? value.length + i : i] : Object.hasOwn(value, i) ? value[i] : undefined
    return found === undefined ? null : found
}

GenericIndex.prototype.apply = function*(input, conf) {
    const t = nameType(input)
    if (t == 'null')
        return yield null
    for (const i of this.index.apply(input, conf))
        yield __indexValue(input, t, i)
}

IndexNode.prototype.apply = function*(input, conf) {
    for (const l of this.lhs.apply(input, conf)) {
        const t = nameType(l)
        for (const i of this.index.apply(input, conf))
            yield t == 'null' ? null : __indexValue(l, t, i)
    }
}

// .[from:to] as jq 1.6 takes it: null for null (jqjs failed: "cannot read property 'slice' of null"), the start rounded
// down and the end up, a string's in characters (jqjs could cut an emoji in two), an error on anything else.
function __slice(value, from, to) {
    const t = nameType(value)
    if (t == 'null')
        return null
    if (t != 'array' && t != 'string')
        throw 'Cannot index ' + t + ' with object'
    const chars = t == 'string' && /[\ud800-\udfff]/.test(value) ? Array.from(value) : value
    const {start, end} = __sliceBounds({start: from, end: to}, chars.length)
    const part = chars.slice(start, end)
    return chars === value || t == 'array' ? part : part.join('')
}

GenericSlice.prototype.apply = function*(input, conf) {
    for (const from of this.from.apply(input, conf))
        for (const to of this.to.apply(input, conf))
            yield __slice(input, from, to)
}

SliceNode.prototype.apply = function*(input, conf) {
    for (const l of this.lhs.apply(input, conf))
        for (const from of this.from.apply(input, conf))
            for (const to of this.to.apply(input, conf))
                yield __slice(l, from, to)
}

// A chain (.a.b, .[0].a): each step's paths are read on the value the steps before reached, as a pipe's are; jqjs
// read them on the chain's input.
FilterNode.prototype.paths = function*(input, conf) {
    if (!this.filter)
        return
    const values = this.source.apply(input, conf)
    for (const path of this.source.paths(input, conf)) {
        const value = values.next().value
        for (const rest of this.filter.paths(value, conf))
            yield path.concat(rest)
    }
}

GenericIndex.prototype.paths = function*(input, conf) {
    for (const key of this.index.apply(input, conf)) {
        __checkPathStep(input, key)
        yield [key]
    }
}

IndexNode.prototype.paths = function*(input, conf) {
    const values = this.lhs.apply(input, conf)
    for (const path of this.lhs.paths(input, conf)) {
        const value = values.next().value
        for (const key of this.index.apply(input, conf)) {
            __checkPathStep(value, key)
            yield path.concat([key])
        }
    }
}

// --- tojson, tostring and @json write a string's control characters as jq and jackson-jq do: \b, \t, \f and \r short,
// as \n already was (jqjs wrote a tab as \u0009, so "a\tb" | tojson differed in text from Conductor's) ---

const __SHORT_ESCAPES = {'\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r'}

escapeString = function(s) {
    return s.replace(/[\\"\x00-\x1f]/g, c => c == '\\' ? '\\\\' : c == '"' ? '\\"' : __SHORT_ESCAPES[c] ?? '\\u00' + c.charCodeAt(0).toString(16).padStart(2, '0'))
}

// --- tostring, @json, @text, the other formats and "\(…)" write a value as tojson does: nan and the infinities as null
// (jq 1.6's nan | tostring is "null"; jqjs wrote NaN and Infinity, so [nan] | tostring gave "[NaN]", no JSON fromjson
// reads), and an object's keys escaped as its strings are (jqjs wrote {"a\"b": 1} as {"a"b":1}) ---

prettyPrint = function(val, indent='', step='    ', LF='\n') {
    const SP = step ? ' ' : ''
    if (typeof val == 'undefined')
        return val
    if (val === null)
        return 'null'
    if (Array.isArray(val)) {
        let ret = '['
        let first = true
        for (const v of val) {
            ret += (first ? '' : ',') + LF + indent + step + prettyPrint(v, indent + step, step, LF)
            first = false
        }
        return ret + LF + indent + ']'
    }
    if (typeof val == 'object') {
        let ret = '{'
        let first = true
        for (const k of Object.keys(val)) {
            ret += (first ? '' : ',') + LF + indent + step + '"' + escapeString(k) + '":' + SP + prettyPrint(val[k], indent + step, step, LF)
            first = false
        }
        return ret + LF + indent + '}'
    }
    if (typeof val == 'string')
        return '"' + escapeString(val) + '"'
    if (typeof val == 'number')
        return Number.isFinite(val) ? '' + val : 'null'
    if (typeof val == 'boolean')
        return val ? 'true' : 'false'
}

// --- a - b on arrays removes every element of a equal to one of b (jq's equality: [1] equals [1], {"a": 1} equals
// {"a": 1}); jqjs compared with JavaScript's identity, so only numbers, strings, booleans and null were ever removed ---

const __jqjsSubtract = SubtractionOperator.prototype.combine
SubtractionOperator.prototype.combine = function(l, r, lt, rt) {
    if (lt == 'array' && rt == 'array')
        return __subtractArrays(l, r)
    return __jqjsSubtract.call(this, l, r, lt, rt)
}

// The elements of l equal to none of r. Strings, numbers, booleans and null are looked up in a Set (jq's equality is
// JavaScript's there; NaN, equal to nothing in jq, is left out of it), objects and arrays compared with the others
// only: comparing every pair made .all - .done over 5,000 ids run past the budget.
function __subtractArrays(l, r) {
    const scalars = new Set()
    const composites = []
    for (const y of r)
        if (y !== null && typeof y == 'object')
            composites.push(y)
        else if (y === y)
            scalars.add(y)
    return l.filter(x => x !== null && typeof x == 'object' ? !composites.some(y => compareValues(x, y) == 0) : !scalars.has(x))
}

// --- a == b and a != b compare arrays and objects element by element, as jq does. jqjs's != negated ==, whose recursion
// into arrays and objects called this.combine, != itself: each element was compared the wrong way round, so
// [1] != [1] and {"a": 1} != {"a": 1} were true and [1] != [2] false (select(.old != .new) kept the unchanged). And ==
// read r.hasOwnProperty, so an object with that key failed the task ("not a function"). ---

function __equal(l, r) {
    const lt = nameType(l)
    if (lt != nameType(r))
        return false
    if (lt == 'array')
        return l.length == r.length && l.every((v, i) => __equal(v, r[i]))
    if (lt == 'object') {
        const keys = Object.keys(l)
        return keys.length == Object.keys(r).length && keys.every(k => Object.hasOwn(r, k) && __equal(l[k], r[k]))
    }
    // NaN is equal to nothing, as in jq.
    return l === r
}

EqualsOperator.prototype.combine = function(l, r) {
    return __equal(l, r)
}

NotEqualsOperator.prototype.combine = function(l, r) {
    return !__equal(l, r)
}

// --- a * b on objects merges into new objects, as jq does: jqjs copied the top level only and wrote b's nested keys
// into a's own nested objects, so a value bound to a variable changed (map($defaults * .) gave each item the nested
// keys of every item before it), and it read l.hasOwnProperty and assigned __proto__ as a key. ---

function __merge(l, r) {
    const out = {}
    for (const k of Object.keys(l))
        __setKey(out, k, l[k])
    for (const k of Object.keys(r)) {
        const both = Object.hasOwn(out, k) && nameType(out[k]) == 'object' && nameType(r[k]) == 'object'
        __setKey(out, k, both ? __merge(out[k], r[k]) : r[k])
    }
    return out
}

const __jqjsMultiply = MultiplicationOperator.prototype.combine
MultiplicationOperator.prototype.combine = function(l, r, lt, rt) {
    if (lt == 'object' && rt == 'object')
        return __merge(l, r)
    return __jqjsMultiply.call(this, l, r, lt, rt)
}

// --- A type error names both values as jq does (jq's type_error2, jackson-jq's JsonQueryTypeException): "string ("id-")
// and number (5) cannot be added", where jqjs wrote "type mismatch in +:string and number cannot be added" (and "in -:"
// for / and %). The message is the task's reasonForIncompletion, and what try … catch . gives. ---

// A value as jq's messages show it: its type and its JSON, cut to jq's 14 characters (11 and "...").
function __described(v) {
    const text = JSON.stringify(v) ?? String(v)
    return nameType(v) + ' (' + (text.length > 14 ? text.slice(0, 11) + '...' : text) + ')'
}

for (const [operator, verb] of [[AdditionOperator, 'added'], [SubtractionOperator, 'subtracted'], [MultiplicationOperator, 'multiplied'], [DivisionOperator, 'divided'], [ModuloOperator, 'divided (remainder)']]) {
    const combine = operator.prototype.combine
    operator.prototype.combine = function(l, r, lt, rt) {
        try {
            return combine.call(this, l, r, lt, rt)
        } catch (e) {
            if (typeof e == 'string' && e.startsWith('type mismatch in '))
                throw __described(l) + ' and ' + __described(r) + ' cannot be ' + verb
            throw e
        }
    }
}

// --- Object construction as jq's: a key giving several values makes an object per key ({(.a, .b): 1} is {"x": 1} and
// {"y": 1}, not one object with both), a key must be a string, and "__proto__" is a key like any other. jqjs gathered
// every key a field gave into each object, turned a number or null into a key's text, and assigned "__proto__" as the
// prototype (the key was lost). ---

ObjectNode.prototype.apply = function*(input, conf) {
    // Per field, its (key, value) pairs in jq's order: each key, with each of its values.
    const fields = []
    for (const {key, value} of this.fields) {
        const pairs = []
        for (const k of key.apply(input, conf)) {
            if (typeof k != 'string')
                throw 'Cannot use ' + __described(k) + ' as object key'
            for (const v of value.apply(input, conf))
                pairs.push([k, v])
        }
        fields.push(pairs)
    }
    yield* __objectsOf(fields, 0, [])
}

// Every object taking one pair of each field, the first field's choice varying slowest, as jq's; chosen holds the
// pairs taken so far.
function* __objectsOf(fields, i, chosen) {
    if (i == fields.length) {
        const out = {}
        // Assignment is the faster, and safe for any key but "__proto__" on a fresh object.
        for (const [k, v] of chosen)
            if (k === '__proto__')
                __setKey(out, k, v)
            else
                out[k] = v
        return yield out
    }
    for (const pair of fields[i]) {
        chosen.push(pair)
        yield* __objectsOf(fields, i + 1, chosen)
        chosen.pop()
    }
}

// INDEX's object: each row under each key idx_expr gives for it (tostring'd), a later row replacing an earlier.
function __indexed(rows, idx, conf) {
    const out = {}
    for (const row of rows)
        for (const k of idx.apply(row, conf))
            __setKey(out, typeof k == 'string' ? k : JSON.stringify(k), row)
    return out
}

// o with v's keys set, as + sets them (a key o has keeps its place).
function __addKeys(o, v) {
    for (const k of Object.keys(v))
        if (k === '__proto__')
            __setKey(o, k, v[k])
        else
            o[k] = v[k]
    return o
}

// The sum of values as jq's + makes it, left to right. Objects and arrays are added into one copy of the first, made
// when the second comes, so each element is copied once; anything else goes through + itself.
function __sum(values) {
    let sum = null
    let owned = false
    for (const v of values) {
        const st = nameType(sum)
        const vt = nameType(v)
        if (st == vt && (st == 'object' || st == 'array')) {
            if (!owned) {
                sum = st == 'array' ? sum.slice() : __addKeys({}, sum)
                owned = true
            }
            if (st == 'array')
                for (let i = 0; i < v.length; i++)
                    sum.push(v[i])
            else
                __addKeys(sum, v)
        } else {
            sum = AdditionOperator.prototype.combine(sum, v, st, vt)
            owned = false
        }
    }
    return sum
}

// --- a + b on two arrays or two objects copies both in interpreted code, so the budget counts the copy. jqjs used
// concat() and Object.assign, native and unseen: reduce .[] as $x ([]; . + [$x]) copies the growing accumulator at
// every row, quadratic, and over 30,000 rows ran for about 20 s (objects, . + {(k): v}, about 110 s) without reaching
// the budget. Object.assign also set a "__proto__" key as the prototype, losing it. ---

// The elements of l then those of r, in a new array.
function __concat(l, r) {
    const out = []
    for (let i = 0; i < l.length; i++)
        out.push(l[i])
    for (let i = 0; i < r.length; i++)
        out.push(r[i])
    return out
}

const __jqjsAdd = AdditionOperator.prototype.combine
AdditionOperator.prototype.combine = function(l, r, lt, rt) {
    if (lt == 'array' && rt == 'array')
        return __concat(l, r)
    if (lt == 'object' && rt == 'object')
        return __addKeys(__addKeys({}, l), r)
    return __jqjsAdd.call(this, l, r, lt, rt)
}

// --- reduce … (init; . + E) and (init; . += E), the usual ways to build an array or object row by row, adds to its accumulator in place
// once the accumulator is its own: a + made it (the init's value is never changed), nothing but this reduce holds it, so
// no one can see the change. Each row then copies only what it adds, where a copy of the whole accumulator per row
// (above, now counted) stopped 3,000 rows at the budget. E runs to its end before the change, so its values are made
// from the accumulator as it was; a value holding the accumulator itself (. + [.]) or several values (. + (E1, E2))
// take the copying +. ---

// E, when a reduce's update is . + E or . += E (the same: for each value $x of E on ., . + $x); else undefined.
function __accumulatingAddend(expr) {
    if (expr instanceof AdditionOperator && expr.l instanceof IdentityNode)
        return expr.r
    if (expr instanceof __ArithmeticUpdate && expr.op == '+' && expr.lhs instanceof IdentityNode)
        return expr.rhs
    return undefined
}

// Whether value is target or holds it at any depth. clean holds the arrays and objects already found not to hold target:
// they are not walked again, so a row adding a value that holds a large shared one (. + [{row: $x, all: $root}]) walks
// $root once per reduce, not once per row (each walk counted by the budget: 300 rows over a 2,000-item $root stopped
// where the copying + completed). Sound while target stays the same object: values do not change once made (only an
// accumulator being built is changed, and it is no one else's), so a container that did not hold target still does not.
function __holds(value, target, clean) {
    const stack = [value]
    while (stack.length > 0) {
        const v = stack.pop()
        if (v === target)
            return true
        if (v === null || typeof v != 'object' || clean.has(v))
            continue
        clean.add(v)
        if (Array.isArray(v))
            for (let i = 0; i < v.length; i++)
                stack.push(v[i])
        else
            for (const k of Object.keys(v))
                stack.push(v[k])
    }
    return false
}

// Whether l + r makes a new array or object, which no one else holds.
function __addMakesOwn(l, r) {
    const lt = nameType(l)
    return lt == nameType(r) && (lt == 'array' || lt == 'object')
}

// The accumulator after a row's . + E: accum changed in place when owned and E gave one value of its type that does not
// hold it, else through +, with E's values combined as they come, as jqjs's + does (so a type error comes before a
// later value's error). owned tells whether the result is the reduce's own; clean is __holds's, for this accum.
function __addToAccumulator(addend, accum, owned, conf, clean) {
    const node = AdditionOperator.prototype
    let held
    let last
    let count = 0
    for (const r of addend.apply(accum, conf)) {
        count++
        if (count == 1 && owned && __addMakesOwn(accum, r)) {
            held = r
            continue
        }
        if (held !== undefined) {
            last = {value: node.combine(accum, held, nameType(accum), nameType(held)), own: true}
            held = undefined
        }
        last = {value: node.combine(accum, r, nameType(accum), nameType(r)), own: __addMakesOwn(accum, r)}
    }
    if (held !== undefined && __holds(held, accum, clean))
        return {value: node.combine(accum, held, nameType(accum), nameType(held)), own: true}
    if (held !== undefined) {
        if (Array.isArray(accum))
            for (let i = 0; i < held.length; i++)
                accum.push(held[i])
        else
            __addKeys(accum, held)
        return {value: accum, own: true}
    }
    return count == 0 ? {value: null, own: false} : last
}

// jqjs's reduce, with this and the binding of a pattern (as \`reduce .[] as [$a, $b] (…)\`, restoring an outer binding
// of its names after each row). A row whose update gives no value leaves null, as in jackson-jq (ReduceExpression:
// reduceResult.isEmpty() ? NullNode) and jq 1.6; jqjs kept the accumulator, so
// reduce .[] as $x ([]; if $x.ok then . + [$x.id] else empty end) gave the ok ids where Conductor gives the last row's.
ReduceNode.prototype.apply = function*(input, conf) {
    const addend = __accumulatingAddend(this.expr)
    for (let accum of this.init.apply(input, conf)) {
        let owned = false
        const clean = new Set()
        for (const v of this.generator.apply(input, conf)) {
            const restore = __saveBindings(this.name, conf)
            try {
                for (const _ of __bind(this.name, v, conf)) {
                    if (addend === undefined) {
                        let next = null
                        for (const a of this.expr.apply(accum, conf))
                            next = a
                        accum = next
                    } else {
                        const before = accum
                        ;({value: accum, own: owned} = __addToAccumulator(addend, accum, owned, conf, clean))
                        // What was found not to hold the old accumulator says nothing of a new one.
                        if (accum !== before)
                            clean.clear()
                    }
                }
            } finally {
                restore()
            }
        }
        yield accum
    }
}

// --- A string with several interpolations giving several values each: jq's order, the first varying fastest
// ("\(1,2)-\(3,4)" is "1-3", "2-3", "1-4", "2-4"); jqjs varied the last fastest. ---

StringLiteral.prototype.applyEscape = function(input, esc, conf) {
    return __interpolated(this, input, esc, conf, this.strings.length - 1)
}

// The text of strings[0..k] with the values of interpolations[0..k-1] between them, the later interpolation's values
// taken in the outer loop, as jq's.
function* __interpolated(node, input, esc, conf, k) {
    if (k == 0)
        return yield node.strings[0]
    const interpolation = node.interpolations[k - 1]
    if (!interpolation) {
        for (const prefix of __interpolated(node, input, esc, conf, k - 1))
            yield prefix + node.strings[k]
        return
    }
    for (const v of interpolation.apply(input, conf))
        for (const prefix of __interpolated(node, input, esc, conf, k - 1))
            yield prefix + esc(v) + node.strings[k]
}

// --- Unary minus: -E negates each value of E, up to the next binary operator (-.a * 2 is (-.a) * 2) ---

class __NegationNode extends ParseNode {
    constructor(operand) {
        super()
        this.operand = operand
    }
    * apply(input, conf) {
        for (const v of this.operand.apply(input, conf)) {
            if (typeof v != 'number')
                throw nameType(v) + ' (' + JSON.stringify(v) + ') cannot be negated'
            yield -v
        }
    }
    toString() {
        return '-' + this.operand
    }
}

// An operator's operand from tokens[i], its leading minus signs included, up to one of stops.
function __parseOperand(tokens, i, stops) {
    if (tokens[i] && tokens[i].type == 'op' && tokens[i].op == '-') {
        const r = __parseOperand(tokens, i + 1, stops)
        if (r.node.length === 0)
            throw 'expected an operand after - at ' + describeLocation(tokens[i + 1])
        return {node: new __NegationNode(r.node), i: r.i}
    }
    return parse(tokens, i, stops)
}

// --- String literals: \uXXXX escapes as jq 1.6's lexer reads them ---

const __HEX4 = /^[0-9a-fA-F]{4}$/

// The text of the \u escape whose digits start at str[at] (in the literal starting at location), and the index of its
// last character: four hexadecimal digits, a high surrogate followed by a \u escape of its low one (the pair's one
// character), and a lone low surrogate U+FFFD, as jq 1.6 gives them. Anything else is refused, as jq 1.6 refuses it
// at compile time: fewer than four hexadecimal digits ("\uZZZZ" was a NUL, "\u12" took the closing quote for a digit),
// or a high surrogate alone ("\ud800" was kept, a string no JSON encoder writes back as it was).
function __unicodeEscape(str, at, location) {
    const digits = str.slice(at, at + 4)
    if (!__HEX4.test(digits))
        throw 'Invalid \\uXXXX escape in the string at ' + location + ': four hexadecimal digits must follow \\u'
    const unit = Number.parseInt(digits, 16)
    if (unit >= 0xDC00 && unit <= 0xDFFF)
        return {text: '\uFFFD', last: at + 3}
    if (unit < 0xD800 || unit > 0xDBFF)
        return {text: String.fromCharCode(unit), last: at + 3}
    const low = str.slice(at + 6, at + 10)
    if (str.slice(at + 4, at + 6) != '\\u' || !__HEX4.test(low) || Number.parseInt(low, 16) < 0xDC00 || Number.parseInt(low, 16) > 0xDFFF)
        throw 'Invalid \\uXXXX\\uXXXX surrogate pair escape in the string at ' + location + ': \\u' + digits + ' must be followed by a low surrogate'
    return {text: String.fromCharCode(unit, Number.parseInt(low, 16)), last: at + 9}
}

// --- UTF-8 and base64 (QuickJS has neither TextEncoder nor btoa) ---

function __utf8Bytes(text) {
    const bytes = []
    for (const ch of text) {
        const c = ch.codePointAt(0)
        if (c < 0x80) bytes.push(c)
        else if (c < 0x800) bytes.push(0xc0 | c >> 6, 0x80 | c & 63)
        else if (c < 0x10000) bytes.push(0xe0 | c >> 12, 0x80 | c >> 6 & 63, 0x80 | c & 63)
        else bytes.push(0xf0 | c >> 18, 0x80 | c >> 12 & 63, 0x80 | c >> 6 & 63, 0x80 | c & 63)
    }
    return bytes
}

// Bytes that are not UTF-8 become U+FFFD, as jq's @base64d makes them.
function __utf8Text(bytes) {
    let text = ''
    for (let i = 0; i < bytes.length;) {
        const b = bytes[i]
        const extra = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : b >= 0xc0 ? 1 : 0
        let c = extra == 0 ? b : b & (0x3f >> extra)
        let valid = extra > 0 || b < 0x80
        for (let k = 1; k <= extra && valid; k++) {
            const next = bytes[i + k]
            if (next === undefined || (next & 0xc0) != 0x80) valid = false
            else c = c << 6 | next & 63
        }
        text += valid ? String.fromCodePoint(c) : '\ufffd'
        i += valid ? extra + 1 : 1
    }
    return text
}

const __BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

formats.base64 = function(v) {
    if (typeof v != 'string')
        v = prettyPrint(v, '', '', '')
    const bytes = __utf8Bytes(v)
    let out = ''
    for (let i = 0; i < bytes.length; i += 3) {
        const n = bytes[i] << 16 | (bytes[i + 1] ?? 0) << 8 | (bytes[i + 2] ?? 0)
        out += __BASE64[n >> 18 & 63] + __BASE64[n >> 12 & 63] + (i + 1 < bytes.length ? __BASE64[n >> 6 & 63] : '=') + (i + 2 < bytes.length ? __BASE64[n & 63] : '=')
    }
    return out
}

formats.base64d = function(v) {
    if (typeof v != 'string')
        throw 'can only base64-decode strings'
    const bytes = []
    let bits = 0, value = 0
    for (const ch of v.replace(/=+$/, '')) {
        const digit = __BASE64.indexOf(ch)
        if (digit < 0)
            throw v + ' is not valid base64 data'
        value = value << 6 | digit
        bits += 6
        if (bits >= 8) {
            bits -= 8
            bytes.push(value >> bits & 255)
        }
    }
    return __utf8Text(bytes)
}

// --- Dates (UTC): jq's broken-down time is [year, month 0-11, day, hours, minutes, seconds, weekday, day of year] ---

const __DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
const __MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']

function __brokenDown(seconds) {
    const d = new Date(Math.floor(seconds) * 1000)
    if (isNaN(d.getTime()))
        throw 'gmtime() requires a valid time'
    const yday = Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86400000)
    return [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds() + (seconds - Math.floor(seconds)), d.getUTCDay(), yday]
}

function __secondsOf(time, what) {
    if (typeof time == 'number') return time
    if (Array.isArray(time) && time.length >= 6 && time.slice(0, 6).every(x => typeof x == 'number'))
        return Date.UTC(time[0], time[1], time[2], time[3], time[4], Math.floor(time[5])) / 1000
    throw what + ' requires parsed datetime inputs'
}

function __strftime(input, format) {
    const t = __secondsOf(input, 'strftime/1')
    const d = new Date(Math.floor(t) * 1000)
    if (isNaN(d.getTime()))
        throw 'strftime/1 requires a valid time'
    const pad = (n, w = 2, c = '0') => String(n).padStart(w, c)
    const fields = {
        Y: () => String(d.getUTCFullYear()), C: () => pad(Math.floor(d.getUTCFullYear() / 100)), y: () => pad(d.getUTCFullYear() % 100),
        m: () => pad(d.getUTCMonth() + 1), d: () => pad(d.getUTCDate()), e: () => pad(d.getUTCDate(), 2, ' '),
        H: () => pad(d.getUTCHours()), I: () => pad((d.getUTCHours() + 11) % 12 + 1), M: () => pad(d.getUTCMinutes()), S: () => pad(d.getUTCSeconds()),
        p: () => d.getUTCHours() < 12 ? 'AM' : 'PM', j: () => pad(__brokenDown(t)[7] + 1, 3),
        a: () => __DAYS[d.getUTCDay()].slice(0, 3), A: () => __DAYS[d.getUTCDay()],
        b: () => __MONTHS[d.getUTCMonth()].slice(0, 3), h: () => __MONTHS[d.getUTCMonth()].slice(0, 3), B: () => __MONTHS[d.getUTCMonth()],
        u: () => String(d.getUTCDay() || 7), w: () => String(d.getUTCDay()), s: () => String(Math.floor(t)), Z: () => 'UTC', z: () => '+0000',
        F: () => fields.Y() + '-' + fields.m() + '-' + fields.d(), T: () => fields.H() + ':' + fields.M() + ':' + fields.S(),
        D: () => fields.m() + '/' + fields.d() + '/' + fields.y(), R: () => fields.H() + ':' + fields.M(),
        c: () => fields.a() + ' ' + fields.b() + ' ' + fields.e() + ' ' + fields.T() + ' ' + fields.Y(), n: () => '\n', t: () => '\t', '%': () => '%',
    }
    return format.replace(/%(.)/g, (whole, spec) => {
        if (!Object.hasOwn(fields, spec))
            throw 'strftime/1: unsupported conversion %' + spec
        return fields[spec]()
    })
}

// The conversions strptime reads, each as a pattern and what it sets of {year, month, day, hours, minutes, seconds}.
const __STRPTIME = {
    Y: ['([+-]?\\d{1,4})', (f, v) => { f.year = +v }], m: ['(\\d{1,2})', (f, v) => { f.month = +v - 1 }],
    d: ['(\\d{1,2})', (f, v) => { f.day = +v }], e: ['\\s?(\\d{1,2})', (f, v) => { f.day = +v }],
    H: ['(\\d{1,2})', (f, v) => { f.hours = +v }], M: ['(\\d{1,2})', (f, v) => { f.minutes = +v }],
    S: ['(\\d{1,2})', (f, v) => { f.seconds = +v }], y: ['(\\d{2})', (f, v) => { f.year = +v < 69 ? 2000 + +v : 1900 + +v }],
    j: ['(\\d{1,3})', (f, v) => { f.yday = +v - 1 }], s: ['([+-]?\\d+)', (f, v) => { f.epoch = +v }],
    b: ['([A-Za-z]{3,9})', (f, v) => { f.month = __MONTHS.findIndex(m => m.toLowerCase().startsWith(v.slice(0, 3).toLowerCase())) }],
    a: ['([A-Za-z]{3,9})', () => {}], Z: ['([A-Za-z]+)', () => {}], z: ['([+-]\\d{2}:?\\d{2}|Z)', (f, v) => { f.offset = v }],
    p: ['([AaPp][Mm])', (f, v) => { f.pm = v.toLowerCase() == 'pm' }], I: ['(\\d{1,2})', (f, v) => { f.hours12 = +v }],
}
for (const [alias, spec] of [['B', 'b'], ['h', 'b'], ['A', 'a']]) __STRPTIME[alias] = __STRPTIME[spec]

function __strptime(input, format) {
    if (typeof input != 'string')
        throw 'strptime/1 requires string inputs and arguments'
    const expanded = format.replace(/%([FTDR])/g, (whole, spec) => ({F: '%Y-%m-%d', T: '%H:%M:%S', D: '%m/%d/%y', R: '%H:%M'})[spec])
    const setters = []
    let pattern = '^'
    for (let i = 0; i < expanded.length; i++) {
        const c = expanded[i]
        if (c == '%') {
            const spec = expanded[++i]
            if (spec == '%') { pattern += '%'; continue }
            if (spec == 'n' || spec == 't') { pattern += '\\s+'; continue }
            if (!Object.hasOwn(__STRPTIME, spec))
                throw 'strptime/1: unsupported conversion %' + spec
            pattern += __STRPTIME[spec][0]
            setters.push(__STRPTIME[spec][1])
        } else if (/\s/.test(c)) pattern += '\\s*'
        else pattern += c.replace(/[.*+?^$(){}|[\]\\]/g, '\\$&')
    }
    const match = new RegExp(pattern + '$').exec(input)
    if (!match)
        throw 'date "' + input + '" does not match format "' + format + '"'
    const f = {year: 1900, month: 0, day: 1, hours: 0, minutes: 0, seconds: 0}
    setters.forEach((set, n) => set(f, match[n + 1]))
    // Each field within glibc strptime's range (jq 1.6 uses it; jackson-jq's Instant.parse refuses them too): a month
    // of 13 or an hour of 24 does not match, where Date.UTC carried it into the next year or day.
    if (f.month < 0 || f.month > 11 || f.day < 1 || f.day > 31 || f.hours > 23 || f.minutes > 59 || f.seconds > 60
        || (f.yday !== undefined && f.yday > 365) || (f.hours12 !== undefined && (f.hours12 < 1 || f.hours12 > 12)))
        throw 'date "' + input + '" does not match format "' + format + '"'
    if (f.hours12 !== undefined) f.hours = f.hours12 % 12 + (f.pm ? 12 : 0)
    else if (f.pm !== undefined && f.pm && f.hours < 12) f.hours += 12
    let ms = f.epoch !== undefined ? f.epoch * 1000
        : f.yday !== undefined ? Date.UTC(f.year, 0, 1 + f.yday, f.hours, f.minutes, f.seconds)
        : Date.UTC(f.year, f.month, f.day, f.hours, f.minutes, f.seconds)
    if (f.offset !== undefined && f.offset != 'Z') {
        const sign = f.offset[0] == '-' ? -1 : 1
        const digits = f.offset.slice(1).replace(':', '')
        ms -= sign * (+digits.slice(0, 2) * 60 + +digits.slice(2)) * 60000
    }
    return __brokenDown(ms / 1000)
}

// A builtin taking a format (strftime, strptime): convert(input, format) for each format its argument gives.
function __withFormat(convert, notAString) {
    return Object.assign(function*(input, conf, args) {
        for (let format of args[0].apply(input, conf)) {
            if (typeof format != 'string')
                throw notAString
            yield convert(input, format)
        }
    }, {params: [{label: 'format'}]})
}

// --- A binding is seen by its own body only: E as $x | body, and foreach's variable ---

// What stands for an unbound name in __readNames's list.
const __UNBOUND = {}

// The names a binding node's pattern binds, worked out once per node rather than once per value.
function __bindingNames(binding) {
    if (binding.__names === undefined)
        binding.__names = __patternNames(binding.name)
    return binding.__names
}

// What names stand for in vars now (__UNBOUND where unbound).
function __readNames(names, vars) {
    const values = new Array(names.length)
    for (let i = 0; i < names.length; i++)
        values[i] = Object.hasOwn(vars, names[i]) ? vars[names[i]] : __UNBOUND
    return values
}

// Puts names back as __readNames read them, the last first: a pattern naming one twice leaves the first's value.
function __putNames(names, values, vars) {
    for (let i = names.length - 1; i >= 0; i--) {
        if (values[i] === __UNBOUND)
            delete vars[names[i]]
        else
            vars[names[i]] = values[i]
    }
}

// Gives out what each value of the binding's body gives (of = 'apply') or its paths (of = 'paths'), with the names as
// they are outside (read when it starts), and the bound ones back once its consumer asks for the next. Inline rather
// than through a generator per value: that frame and two closures per value halved how many values a filter with a
// binding could give within the budget.
function* __bindingPipeGive(pipe, input, conf, of) {
    const names = __bindingNames(pipe.lhs)
    const outer = __readNames(names, conf.variables)
    for (const bound of pipe.lhs.apply(input, conf))
        for (const value of pipe.rhs[of](bound, conf)) {
            const inner = __readNames(names, conf.variables)
            __putNames(names, outer, conf.variables)
            try {
                yield value
            } finally {
                __putNames(names, inner, conf.variables)
            }
        }
}

// __bindingPipeGive for a pattern of one name (the usual E as $x), without a list per value.
function* __bindingPipeGiveOne(pipe, input, conf, of) {
    const name = pipe.lhs.name
    const outerBound = Object.hasOwn(conf.variables, name)
    const outer = conf.variables[name]
    for (const bound of pipe.lhs.apply(input, conf))
        for (const value of pipe.rhs[of](bound, conf)) {
            const innerBound = Object.hasOwn(conf.variables, name)
            const inner = conf.variables[name]
            if (outerBound)
                conf.variables[name] = outer
            else
                delete conf.variables[name]
            try {
                yield value
            } finally {
                if (innerBound)
                    conf.variables[name] = inner
                else
                    delete conf.variables[name]
            }
        }
}

// E as $x | body: jqjs's pipe, its body's values given out with $x as it is outside (jackson-jq's PipedQuery binds $x in
// a child scope that only the body sees): in 1 as $y | (2 as $y | 5) | $y, the last $y read 2. Another pipe is jqjs's,
// called without a frame of its own (the stack is small).
const __plainPipeApply = PipeNode.prototype.apply
PipeNode.prototype.apply = function(input, conf) {
    if (!(this.lhs instanceof VariableBinding))
        return __plainPipeApply.call(this, input, conf)
    return typeof this.lhs.name == 'string' ? __bindingPipeGiveOne(this, input, conf, 'apply') : __bindingPipeGive(this, input, conf, 'apply')
}

// A path through a binding, as jackson-jq's PipedQuery passes the path on past it: the binding gives its own input,
// at the path it came with, so the pipe's paths are its body's. jqjs's pipe asked the binding for paths it has none
// of: path(. as $x | .a) and (.items[] | . as $i | select($i.qty > 0)).ok = true failed with "not a function".
const __plainPipePaths = PipeNode.prototype.paths
PipeNode.prototype.paths = function(input, conf) {
    if (!(this.lhs instanceof VariableBinding))
        return __plainPipePaths.call(this, input, conf)
    return typeof this.lhs.name == 'string' ? __bindingPipeGiveOne(this, input, conf, 'paths') : __bindingPipeGive(this, input, conf, 'paths')
}

// --- Closures: a function's arguments run in the scope of the call that passed them ---

// Runs start()'s iterator with conf's function arguments and variables set to scope's during each of its steps, and
// puts the current ones back between steps (the consumer of a value runs in its own scope). Closes the iterator when
// its consumer stops early, so that its own restoring (finally) runs in its scope.
function* __inScope(conf, scope, start) {
    // Inline rather than through a helper: each frame here is one more per nested call, and the stack is small.
    let args = conf.userFuncArgs
    let vars = conf.variables
    conf.userFuncArgs = scope.args
    conf.variables = scope.vars
    let it
    try {
        it = start()
    } finally {
        conf.userFuncArgs = args
        conf.variables = vars
    }
    let finished = false
    try {
        for (;;) {
            args = conf.userFuncArgs
            vars = conf.variables
            conf.userFuncArgs = scope.args
            conf.variables = scope.vars
            let r
            try {
                r = it.next()
            } finally {
                conf.userFuncArgs = args
                conf.variables = vars
            }
            if (r.done) {
                finished = true
                return
            }
            yield r.value
        }
    } finally {
        if (!finished) {
            args = conf.userFuncArgs
            vars = conf.variables
            conf.userFuncArgs = scope.args
            conf.variables = scope.vars
            try {
                it.return()
            } finally {
                conf.userFuncArgs = args
                conf.variables = vars
            }
        }
    }
}

// Where a builtin that jqjs defines in jq (map, select, …) is defined: it sees the other builtins and its own
// parameters only, not a def or a variable of the filter calling it (def map(f): 0; unique_by(.) still groups).
const __BUILTIN_SCOPE = {args: Object.create(null), vars: Object.create(null)}

// A call of a function defined in jq (a def, or a builtin jqjs defines in jq): its body runs in the scope it was defined
// in (defined, {args, vars}; a builtin's when none), with its parameters bound to the arguments, each a closure over the
// caller's function arguments and variables as they were at the call.
function __callUserFunction(params, body, input, conf, args, defined) {
    const scope = defined === undefined ? __BUILTIN_SCOPE : defined
    const own = Object.create(scope.args)
    if (params.length > 0) {
        const caller = {args: conf.userFuncArgs, vars: Object.assign({}, conf.variables)}
        for (let i = 0; i < params.length; i++) {
            const arg = args[i]
            own[params[i] + '/0'] = {
                apply: (x, c) => __inScope(c, caller, () => arg.apply(x, c)),
                paths: (x, c) => __inScope(c, caller, () => arg.paths(x, c)),
            }
        }
    }
    // The body binds its variables (its $parameters too) in a copy of its own: in one object shared between calls,
    // def f($n): $n + f($n - 1) read the inner call's $n on the left of + once the inner call had given its value.
    return __inScope(conf, {args: own, vars: Object.assign({}, scope.vars)}, () => body(input, conf))
}

// --- def: bound where it is written, for the rest of its scope, with the names around it there ---

// def name(params): body; rest. jq binds names where they are written: the body sees the variables, defs and
// parameters around the def (1 as $x | def f: $x; 2 as $x | f gives 1), itself (it may recurse), and not what a caller
// has bound; the def is seen by rest only ((def f: 2; f), f gives 2, then the outer f). Each time the def is reached
// (once per call of a function whose body holds it) it closes over the scope as it is then.
class __DefNode extends ParseNode {
    constructor(name, params, body, rest) {
        super()
        this.name = name
        this.params = params
        this.body = body
        this.rest = rest
    }
    apply(input, conf) {
        return __inScope(conf, this.scopeOfRest(conf), () => this.rest.apply(input, conf))
    }
    paths(input, conf) {
        return __inScope(conf, this.scopeOfRest(conf), () => this.rest.paths(input, conf))
    }
    // The scope rest runs in: the current one, and the def (a closure over it, and over itself).
    scopeOfRest(conf) {
        const args = Object.create(conf.userFuncArgs)
        const defined = {args, vars: Object.assign({}, conf.variables)}
        const {params, body} = this
        const applied = (x, c) => body.apply(x, c)
        const pathed = (x, c) => body.paths(x, c)
        args[this.name] = {
            apply: (x, c, callArgs) => __callUserFunction(params, applied, x, c, callArgs, defined),
            paths: (x, c, callArgs) => __callUserFunction(params, pathed, x, c, callArgs, defined),
        }
        return {args, vars: conf.variables}
    }
    toString() {
        const name = this.name.replace(/\/.*$/, '')
        return 'def ' + name + (this.params.length ? '(' + this.params.join('; ') + ')' : '') + ': ' + this.body + '; ' + this.rest
    }
}

// A name bound in the scope (a def, or a function's parameter) before a builtin; a def is called with the call's
// arguments (jqjs passed none: it had no defs in scope, only parameters).
FunctionCall.prototype.apply = function(input, conf) {
    const bound = conf.userFuncArgs[this.name]
    if (bound !== undefined)
        return bound.apply(input, conf, this.args)
    const func = functions[this.name]
    if (!func)
        throw 'no such function ' + this.name
    return func(input, conf, this.args)
}

FunctionCall.prototype.paths = function(input, conf) {
    const bound = conf.userFuncArgs[this.name]
    if (bound !== undefined)
        return bound.paths(input, conf, this.args)
    const func = functions[this.name + '-paths']
    if (!func)
        throw 'no paths for ' + this.name
    return func(input, conf, this.args)
}

// --- Regular expressions: match and capture as jq's (Oniguruma) give them ---

// A jq regex and its flags as a JavaScript RegExp (with 'u', and extra's flags). jq (Oniguruma, Perl syntax) and
// jackson-jq (joni) read flags otherwise than jqjs did: "m" lets . match a newline (JavaScript's s; jqjs made ^ and $
// match at every line, which neither does), "s" is single-line mode (^ and $ at the ends only, as JavaScript's are
// already; jqjs let . match a newline), "p" is both, "x" ignores whitespace and # comments in the regex (jqjs refused
// it), "n" and "l" change which of several matches is taken and are read as none. A leading (?i), (?x), (?s) or (?m),
// as Java and Perl write them, applies to the whole regex (JavaScript has no such group). Outside JavaScript's syntax
// too: \A and \z (the input's ends), \Z (the end, or before a last newline), and POSIX brackets ([[:alpha:]], [[:digit:]], …); \d and \w match any script's digits and letters, as in Oniguruma.
const __POSIX_CLASSES = {alpha: '\\p{Alphabetic}', digit: '\\p{Nd}', alnum: '\\p{Alphabetic}\\p{Nd}', upper: '\\p{Uppercase}',
    lower: '\\p{Lowercase}', space: '\\s', blank: ' \\t', punct: '\\p{P}', xdigit: '0-9A-Fa-f', word: '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}',
    cntrl: '\\p{Cc}', print: '\\P{C}', graph: '\\p{L}\\p{M}\\p{N}\\p{P}\\p{S}'}
const __WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}'

const __QUANTIFIER = /\{\d+(?:,\d*)?\}/y

// \e in a jq regex, for JavaScript's u mode, which refuses to escape what is not its syntax: Oniguruma takes \-, \@,
// \#, \' or \  as the character itself (JavaScript without u did too), and JavaScript's u refused them ("invalid escape").
// Letters and digits (\n, \s, \b, \1, \x41, \p{L}…) stay escapes.
function __escapedLiteral(e, inClass) {
    if (/[A-Za-z0-9]/.test(e) || '^$\\.*+?()[]{}|/'.includes(e) || (inClass && e == '-'))
        return '\\' + e
    return e
}

function __jqRegExp(source, flags, extra) {
    if (typeof source != 'string')
        throw nameType(source) + ' (' + JSON.stringify(source) + ') cannot be matched, as it is not a string'
    if (flags !== null && flags !== undefined && typeof flags != 'string')
        throw nameType(flags) + ' (' + JSON.stringify(flags) + ') is not a string'
    let js = 'u' + (extra || '')
    let extended = false
    const inline = /^\(\?([imsx]+)\)/.exec(source)
    if (inline) {
        source = source.slice(inline[0].length)
        for (const f of inline[1])
            if (f == 'x') extended = true
            else if (!js.includes(f)) js += f
    }
    for (const f of flags || '') {
        const mapped = f == 'm' || f == 'p' ? 's' : f == 'i' ? 'i' : ''
        if (mapped) {
            if (!js.includes(mapped)) js += mapped
        } else if (f == 'x') {
            extended = true
        } else if (f != 'g' && f != 's' && f != 'n' && f != 'l') {
            throw flags + ' is not a valid modifier string'
        }
    }
    let out = ''
    let inClass = false
    for (let i = 0; i < source.length; i++) {
        const c = source[i]
        if (c == '\\') {
            const e = source[i + 1]
            i++
            if (e === undefined) out += '\\'
            else if (e == 'd') out += '\\p{Nd}'
            else if (e == 'D') out += '\\P{Nd}'
            else if (e == 'w') out += inClass ? __WORD : '[' + __WORD + ']'
            else if (e == 'W') out += inClass ? '\\W' : '[^' + __WORD + ']'
            else if (!inClass && e == 'A') out += '(?<![\\s\\S])'
            else if (!inClass && e == 'z') out += '(?![\\s\\S])'
            else if (!inClass && e == 'Z') out += '(?=\\n?(?![\\s\\S]))'
            else if ((e == 'p' || e == 'P') && source[i + 1] == '{' && source.indexOf('}', i) > 0) {
                // A property (\p{L}) as it is: its braces are no quantifier's.
                const end = source.indexOf('}', i)
                out += '\\' + source.slice(i, end + 1)
                i = end
            } else out += __escapedLiteral(e, inClass)
        } else if (inClass) {
            const posix = c == '[' ? /^\[:(\^?)([a-z]+):\]/.exec(source.slice(i)) : null
            if (posix && Object.hasOwn(__POSIX_CLASSES, posix[2]) && posix[1] == '') {
                out += __POSIX_CLASSES[posix[2]]
                i += posix[0].length - 1
            } else {
                if (c == ']')
                    inClass = false
                out += c
            }
        } else if (c == '[') {
            inClass = true
            out += c
            if (source[i + 1] == '^') { out += '^'; i++ }
            if (source[i + 1] == ']') { out += '\\]'; i++ }
        } else if (c == '{') {
            // A quantifier ({2}, {2,}, {2,5}) as it is; any other brace is itself, as in Oniguruma ({{name}}, {,2}).
            __QUANTIFIER.lastIndex = i
            const quantifier = __QUANTIFIER.exec(source)
            out += quantifier ? quantifier[0] : '\\{'
            if (quantifier) i += quantifier[0].length - 1
        } else if (c == '}' || c == ']') {
            out += '\\' + c
        } else if (extended && /\s/.test(c)) {
            // dropped
        } else if (extended && c == '#') {
            while (i + 1 < source.length && source[i + 1] != '\n') i++
        } else {
            out += c
        }
    }
    return new RegExp(out, js)
}

// The names of source's capture groups, in order (null for an unnamed one): JavaScript's match does not say which
// group a name belongs to when two groups matched the same text, or when a group did not take part.
function __groupNames(source) {
    const names = []
    let inClass = false
    for (let i = 0; i < source.length; i++) {
        const c = source[i]
        if (c == '\\') {
            i++
        } else if (inClass) {
            if (c == ']')
                inClass = false
        } else if (c == '[') {
            inClass = true
        } else if (c == '(') {
            if (source[i + 1] != '?')
                names.push(null)
            else if (source[i + 2] == '<' && source[i + 3] != '=' && source[i + 3] != '!') {
                const end = source.indexOf('>', i)
                names.push(source.slice(i + 3, end))
            }
        }
    }
    return names
}

// Code points in text before a UTF-16 index, as a counter that moves from where it last stopped: the matches of "g"
// come in order, so their offsets cost the input's length once in all (counting from the start for each made
// [match("\\d"; "g")] over a few thousand characters run past the budget). Text without surrogates counts as its index.
function __codePointCounter(text) {
    if (!/[\ud800-\udfff]/.test(text))
        return at => at
    // A unit that starts a character: all but the low half of a pair.
    const starts = i => {
        const c = text.charCodeAt(i)
        return c < 0xdc00 || c > 0xdfff || i == 0 || (text.charCodeAt(i - 1) & 0xfc00) != 0xd800
    }
    let index = 0
    let points = 0
    return at => {
        for (; index < at; index++)
            if (starts(index))
                points++
        while (index > at)
            if (starts(--index))
                points--
        return points
    }
}

// jq's match(re; flags) on input: every match with "g", else the first. Offsets and lengths in code points; a group
// that did not take part is {offset: -1, length: 0, string: null}; an empty match moves on by one character.
function* __matches(input, re, flags) {
    if (Array.isArray(re)) {
        flags = re[1] ?? flags
        re = re[0]
    }
    if (typeof input != 'string')
        throw nameType(input) + ' (' + JSON.stringify(input) + ') cannot be matched, as it is not a string'
    const regexp = __jqRegExp(re, flags, 'gd')
    const global = (flags || '').includes('g')
    const names = __groupNames(re)
    const codePoints = __codePointCounter(input)
    let match
    while ((match = regexp.exec(input)) !== null) {
        const captures = []
        for (let i = 1; i < match.length; i++) {
            const name = names[i - 1] ?? null
            if (match[i] === undefined)
                captures.push({offset: -1, length: 0, string: null, name})
            else {
                const offset = codePoints(match.indices[i][0])
                captures.push({offset, length: codePoints(match.indices[i][1]) - offset, string: match[i], name})
            }
        }
        const offset = codePoints(match.index)
        yield {offset, length: codePoints(match.index + match[0].length) - offset, string: match[0], captures}
        // As jq 1.6's f_match: the next match starts where this one ended (a character on after an empty one), and
        // none starts at the end of the input.
        if (match[0] === '')
            regexp.lastIndex += input.codePointAt(regexp.lastIndex) > 0xffff ? 2 : 1
        if (!global || regexp.lastIndex >= input.length)
            return
    }
}

// jq's split($re; flags): the parts between the matches of re (jqjs split with JavaScript's String.split, which puts
// the groups' text between the parts), and splits, its parts one by one.
function __splitByRegex(input, re, flags) {
    if (typeof input != 'string')
        throw 'split input must be a string'
    const parts = []
    let from = 0
    const chars = Array.from(input)
    for (const m of __matches(input, re, 'g' + (flags || ''))) {
        parts.push(chars.slice(from, m.offset).join(''))
        from = m.offset + m.length
    }
    parts.push(chars.slice(from).join(''))
    return parts
}

// jqjs's sub (which sub/2, sub/3, gsub/2 and gsub/3 call) with jq's regex reading (__jqRegExp), and an empty match
// moving on by one character (jqjs repeated it until the budget ran out: gsub(""; "-"), gsub("\\s*"; "")).
sub = function*(input, conf, regexpExpr, replacementExpr, flags = '') {
    if (typeof input != 'string')
        throw nameType(input) + ' (' + JSON.stringify(input) + ') cannot be matched, as it is not a string'
    for (const regexp of regexpExpr.apply(input, conf)) {
        const re = __jqRegExp(regexp, flags, 'g')
        const global = (flags || '').includes('g')
        const names = __groupNames(regexp)
        const bits = []
        let lastIndex = 0
        let match
        while ((match = re.exec(input)) !== null) {
            const groups = {}
            for (let i = 1; i < match.length; i++)
                if (names[i - 1])
                    __setKey(groups, names[i - 1], match[i] === undefined ? null : match[i])
            bits.push(input.slice(lastIndex, match.index), groups)
            lastIndex = match.index + match[0].length
            if (match[0] === '')
                re.lastIndex += input.codePointAt(re.lastIndex) > 0xffff ? 2 : 1
            if (!global || re.lastIndex > input.length)
                break
        }
        if (bits.length == 0) {
            yield input
            continue
        }
        const finalPiece = input.slice(lastIndex)
        const results = []
        for (let i = 0; i < bits.length; i += 2) {
            const these = []
            for (const replacement of replacementExpr.apply(bits[i + 1], conf)) {
                if (typeof replacement != 'string')
                    throw nameType(replacement) + ' (' + JSON.stringify(replacement) + ') cannot be added to a string'
                these.push(bits[i] + replacement)
            }
            results.push(these)
        }
        // As jqjs: the n-th output joins each match's n-th replacement.
        for (let index = 0; ; index++) {
            let r = ''
            let any = false
            for (const these of results) {
                if (these[index] !== undefined)
                    any = true
                r += these[index] ?? ''
            }
            if (!any)
                break
            yield r + finalPiece
        }
    }
}

// jq's def capture(re; mods): match(re; mods) | [.captures | .[] | select(.name != null) | {key: .name, value: .string}] | from_entries
function __captured(m) {
    const out = {}
    for (const c of m.captures)
        if (c.name !== null)
            __setKey(out, c.name, c.string)
    return out
}

Object.assign(functions, {
    'match/1': Object.assign(function*(input, conf, args) {
        for (const re of args[0].apply(input, conf))
            yield* __matches(input, re, null)
    }, {params: [{label: 'regex'}]}),
    'match/2': Object.assign(function*(input, conf, args) {
        for (const flags of args[1].apply(input, conf))
            for (const re of args[0].apply(input, conf))
                yield* __matches(input, re, flags)
    }, {params: [{label: 'regex'}, {label: 'flags'}]}),
    'split/2': Object.assign(function*(input, conf, args) {
        for (const flags of args[1].apply(input, conf))
            for (const re of args[0].apply(input, conf))
                yield __splitByRegex(input, re, flags)
    }, {params: [{label: 'regex'}, {label: 'flags'}]}),
    'splits/1': Object.assign(function*(input, conf, args) {
        for (const re of args[0].apply(input, conf))
            yield* __splitByRegex(input, re, null)
    }, {params: [{label: 'regex'}]}),
    'splits/2': Object.assign(function*(input, conf, args) {
        for (const flags of args[1].apply(input, conf))
            for (const re of args[0].apply(input, conf))
                yield* __splitByRegex(input, re, flags)
    }, {params: [{label: 'regex'}, {label: 'flags'}]}),
    'capture/1': Object.assign(function*(input, conf, args) {
        for (const re of args[0].apply(input, conf))
            for (const m of __matches(input, re, null))
                yield __captured(m)
    }, {params: [{label: 'regex'}]}),
    'capture/2': Object.assign(function*(input, conf, args) {
        for (const flags of args[1].apply(input, conf))
            for (const re of args[0].apply(input, conf))
                for (const m of __matches(input, re, flags))
                    yield __captured(m)
    }, {params: [{label: 'regex'}, {label: 'flags'}]}),
})

// --- Truth: jq's false and null are false, and every other value true (0, "", [] and {} too); jqjs took JavaScript's,
// so select(.count) dropped a count of 0 and if .name then … took "" as false. and/or stop at their left's answer, as
// jq's do: select(type == "object" and has("x")) over .. no longer raises has's error on a number. A condition giving
// several values runs a branch for each, as jq does. ---

function __truthy(v) {
    return v !== false && v !== null
}

AndOperator.prototype.apply = function*(input, conf) {
    for (const l of this.l.apply(input, conf)) {
        if (!__truthy(l)) {
            yield false
            continue
        }
        for (const r of this.r.apply(input, conf))
            yield __truthy(r)
    }
}

OrOperator.prototype.apply = function*(input, conf) {
    for (const l of this.l.apply(input, conf)) {
        if (__truthy(l)) {
            yield true
            continue
        }
        for (const r of this.r.apply(input, conf))
            yield __truthy(r)
    }
}

// if c_i then t_i elif … else e end from the i-th condition on: each value of c_i picks t_i or what follows.
function* __ifFrom(node, i, input, conf) {
    if (i == node.conditions.length) {
        if (node.elseBranch)
            yield* node.elseBranch.apply(input, conf)
        else
            yield input
        return
    }
    for (const c of node.conditions[i].apply(input, conf)) {
        if (__truthy(c))
            yield* node.thens[i].apply(input, conf)
        else
            yield* __ifFrom(node, i + 1, input, conf)
    }
}

IfNode.prototype.apply = function(input, conf) {
    return __ifFrom(this, 0, input, conf)
}

// --- Paths through if, //, empty, first(f), limit(n; f) and recurse, as jq's: each is a path expression there (jq's
// defs of first, limit and recurse are made of paths; jackson-jq's expressions emit paths too), so
// del(first(.items[] | select(.id == $id))), (if .a then .a else .b end) |= f, del(.. | if … then . else empty end) and
// [paths] through recurse work; jqjs had none ("no paths for first/1", "not a function"). ---

function* __ifPathsFrom(node, i, input, conf) {
    if (i == node.conditions.length) {
        if (node.elseBranch)
            yield* node.elseBranch.paths(input, conf)
        else
            yield []
        return
    }
    for (const c of node.conditions[i].apply(input, conf)) {
        if (__truthy(c))
            yield* node.thens[i].paths(input, conf)
        else
            yield* __ifPathsFrom(node, i + 1, input, conf)
    }
}

// What is no path expression (a literal, a string with interpolations, [..], {..}, an operator, @format) fails on
// its first value as jq's does: "Invalid path expression with result [1,2]", the value cut to 29 characters as jq 1.6
// cuts it. jqjs's literal gave itself as a path (path(1) was 1, path(.a // "x") ["x"]) and the rest failed with "not a
// function", a reason that says nothing, which (.tags // []) |= . + ["new"] now reaches through //. A variable is no
// path either (jackson-jq's VariableAccess gives its value without one): .a as $v | ($v) |= 5 said "not a function".
// (reduce and foreach are path expressions in jq: they keep their "not a function" rather than a message saying they
// are not.)
function* __noPaths(input, conf) {
    for (const v of this.apply(input, conf)) {
        const text = JSON.stringify(v) ?? String(v)
        throw 'Invalid path expression with result ' + (text.length > 29 ? text.slice(0, 26) + '...' : text)
    }
}
for (const node of [ValueNode, StringLiteral, ArrayNode, ObjectNode, OperatorNode, FormatNode, VariableReference])
    node.prototype.paths = __noPaths

IfNode.prototype.paths = function(input, conf) {
    return __ifPathsFrom(this, 0, input, conf)
}

// jq's path(a // b): the paths of a whose values are neither null nor false (an error in a counts as none), else b's.
AlternativeOperator.prototype.paths = function*(input, conf) {
    const kept = []
    try {
        for (const p of this.lhs.paths(input, conf))
            if (__truthy(__getPath(input, p)))
                kept.push(p)
    } catch (e) {
        caughtJqError(e)
    }
    if (kept.length > 0)
        yield* kept
    else
        yield* this.rhs.paths(input, conf)
}

// jq's def recurse(f; cond): def r: ., (f | select(cond) | r); r; with the paths taken below prefix.
// recurse's condition for repeat, which walks every value.
const __ALWAYS_TRUE = { *apply() { yield true } }

function* __recursePaths(value, prefix, f, cond, conf) {
    yield prefix
    for (const p of f.paths(value, conf)) {
        const v = __getPath(value, p)
        for (const c of cond.apply(v, conf))
            if (__truthy(c))
                yield* __recursePaths(v, prefix.concat(p), f, cond, conf)
    }
}

Object.assign(functions, {
    'empty/0-paths': function*() {
    },
    'first/1-paths': function*(input, conf, args) {
        for (const p of args[0].paths(input, conf))
            return yield p
    },
    'limit/2-paths': function*(input, conf, args) {
        for (const n of args[0].apply(input, conf)) {
            if (typeof n != 'number')
                throw 'Invalid limit: ' + nameType(n)
            if (n < 0) {
                yield* args[1].paths(input, conf)
                continue
            }
            let count = 0
            if (n > 0)
                for (const p of args[1].paths(input, conf)) {
                    yield p
                    if (++count >= n)
                        break
                }
        }
    },
    'recurse/2-paths': function(input, conf, args) {
        return __recursePaths(input, [], args[0], args[1], conf)
    },
})

// jq's recursive generators (def r: ., (f | r) and the like), walked depth first with a stack of iterators rather than a
// JS frame per level: the stack is small (a few hundred levels), a walk may be thousands deep. level(v) gives the values
// v gives out, and a __Descend where the walk goes down next, before v's next value. As jq's tail call, a level whose
// last value is walked is dropped first, so a walk whose step gives one value holds one level, not one per step (each
// kept its frames: GC over them took 6 s for the budget's worth of recurse(. + 1)); to know it is the last, the level's
// next value is asked for before that walk (past the first __WALK_LEVELS_KEPT levels), and what that raised (an error,
// a break) is kept and raised after it, where jq raises it: raised at once, [0 | recurse(if . < 3 then . + 1,
// error("x") else empty end)?] gave [0], not [0, 1, 2, 3].
class __Descend {
    constructor(value) {
        this.value = value
    }
}

const __NOTHING_AHEAD = {}

// What a level raised when its next value was asked for ahead, to be raised in its turn.
class __RaisedAhead {
    constructor(error) {
        this.error = error
    }
}

// Whether e is raised by the filter (a jq error, a break), which comes where the walk reaches it; not QuickJS's own
// InternalError (the budget, out of memory, a stack overflow) or the null it throws when memory is full, which end the
// run at once.
function __raisedByFilter(e) {
    return e instanceof BreakSignal || typeof e == 'string' || (e instanceof Error && e.name != 'InternalError')
}

// How deep a walk goes before it asks a level for its next value ahead (see above): within it, a step whose next value
// would never come (limit(3; 0 | while(true; . + 1, last(range(1e9))))) is never asked for, as in jq.
const __WALK_LEVELS_KEPT = 64

function* __walk(input, level) {
    const levels = [level(input)]
    const ahead = [__NOTHING_AHEAD]
    try {
        while (levels.length) {
            const k = levels.length - 1
            let item = ahead[k]
            if (item instanceof __RaisedAhead)
                throw item.error
            if (item !== __NOTHING_AHEAD)
                ahead[k] = __NOTHING_AHEAD
            else {
                const r = levels[k].next()
                if (r.done) {
                    levels.pop()
                    ahead.pop()
                    continue
                }
                item = r.value
            }
            if (!(item instanceof __Descend)) {
                yield item
                continue
            }
            // Shallow, a level is kept as jq keeps its frame (its next value is asked for when the walk comes back to
            // it, as jq does); deeper, its next value is asked for first, so that a finished level is dropped.
            if (levels.length > __WALK_LEVELS_KEPT) {
                let r
                try {
                    r = levels[k].next()
                } catch (e) {
                    if (!__raisedByFilter(e))
                        throw e
                    r = {done: false, value: new __RaisedAhead(e)}
                }
                if (r.done) {
                    levels.pop()
                    ahead.pop()
                } else
                    ahead[k] = r.value
            }
            levels.push(level(item.value))
            ahead.push(__NOTHING_AHEAD)
        }
    } finally {
        // A consumer that stops early (limit, first) closes each level, so that what they hold open is closed too.
        for (let k = levels.length - 1; k >= 0; k--)
            levels[k].return()
    }
}

// The values any/all look at: an array's or an object's, as jq's reduce .[] reads them.
function __iterated(input, name) {
    const t = nameType(input)
    if (t == 'array')
        return input
    if (t == 'object')
        return Object.values(input)
    throw 'Cannot iterate over ' + t + ' (' + name + ')'
}

// any/all with a generator and a condition: stop at the first value that decides.
function* __anyAll(values, cond, conf, want) {
    for (const v of values)
        for (const c of cond ? cond.apply(v, conf) : [v])
            if (__truthy(c) == want)
                return yield want
    yield !want
}

Object.assign(functions, {
    'not/0': function*(input) {
        yield !__truthy(input)
    },
    'any/0': function*(input, conf) {
        yield* __anyAll(__iterated(input, 'any'), null, conf, true)
    },
    'all/0': function*(input, conf) {
        yield* __anyAll(__iterated(input, 'all'), null, conf, false)
    },
    'any/1': Object.assign(function*(input, conf, args) {
        yield* __anyAll(__iterated(input, 'any'), args[0], conf, true)
    }, {params: [{mode: 'defer'}]}),
    'all/1': Object.assign(function*(input, conf, args) {
        yield* __anyAll(__iterated(input, 'all'), args[0], conf, false)
    }, {params: [{mode: 'defer'}]}),
    'any/2': function*(input, conf, args) {
        yield* __anyAll(args[0].apply(input, conf), args[1], conf, true)
    },
    'all/2': function*(input, conf, args) {
        yield* __anyAll(args[0].apply(input, conf), args[1], conf, false)
    },
    // jq's def while(cond; update): def _while: if cond then ., (update | _while) else empty end; _while. Through
    // __walk, so that a long loop needs no deep stack, and lazily: jqjs's queue ran all of update's values before
    // walking the first, so limit(3; 0 | while(true; . + 1, (. + 1e9 | error))) failed where jq gives 0, 1, 2.
    'while/2': function(input, conf, args) {
        const [cond, update] = args
        return __walk(input, function*(v) {
            for (const c of cond.apply(v, conf)) {
                if (!__truthy(c))
                    continue
                yield v
                for (const u of update.apply(v, conf))
                    yield new __Descend(u)
            }
        })
    },
    // jq's def until(cond; next): def _until: if cond then . else (next | _until) end; _until.
    'until/2': function(input, conf, args) {
        const [cond, next] = args
        return __walk(input, function*(v) {
            for (const c of cond.apply(v, conf)) {
                if (__truthy(c)) {
                    yield v
                    continue
                }
                for (const u of next.apply(v, conf))
                    yield new __Descend(u)
            }
        })
    },
    // jq's def recurse(f; cond): def r: ., (f | select(cond) | r); r. jqjs's ran all of f's values before walking the
    // first (so recurse over an endless f never gave a value) and quietly stopped after 100,000 values.
    'recurse/2': function(input, conf, args) {
        const [f, cond] = args
        return __walk(input, function*(v) {
            yield v
            for (const x of f.apply(v, conf))
                for (const c of cond.apply(x, conf))
                    if (__truthy(c))
                        yield new __Descend(x)
        })
    },
    // jq's def repeat(f): def _repeat: ., (f | _repeat); _repeat (jq 1.7's and the manual's: the input, then f applied to
    // each value given, so 1 | repeat(. * 2) is 1, 2, 4, ...; the jq 1.6 binary gives f's values on the input again and
    // again, [2, 2, 2] for limit(3; 1 | repeat(. + 1)), a stream of one value no filter means; jackson-jq has none).
    // Through __walk, as jq's tail call, so a long repeat needs no deep stack.
    'repeat/1': function(input, conf, args) {
        const [f] = args
        return __walk(input, function*(v) {
            yield v
            for (const x of f.apply(v, conf))
                yield new __Descend(x)
        })
    },
    'repeat/1-paths': function(input, conf, args) {
        return __recursePaths(input, [], args[0], __ALWAYS_TRUE, conf)
    },
})

// --- Builtins: jq's, missing from jqjs or wrong there ---

Object.assign(functions, {
    'setpath/2': Object.assign(function*(input, conf, args) {
        for (const path of args[0].apply(input, conf)) {
            if (!Array.isArray(path))
                throw 'Path must be specified as an array'
            for (const v of args[1].apply(input, conf))
                yield __setPath(input, path, 0, v)
        }
    }, {params: [{label: 'path'}, {label: 'value'}]}),
    // jq: null has no key (false); jqjs read a property of null.
    'has/1': Object.assign(function*(input, conf, args) {
        for (const k of args[0].apply(input, conf)) {
            const t = nameType(input)
            if (t == 'null')
                yield false
            else if (t == 'object' && typeof k == 'string')
                yield Object.hasOwn(input, k)
            else if (t == 'array' && typeof k == 'number')
                yield k >= 0 && k < input.length
            else
                throw 'Cannot check whether ' + t + ' has a ' + nameType(k) + ' key'
        }
    }, {params: [{label: 'key'}]}),
    // jqjs's missed a run of elements ending the array ([1,2,3,1,2] | indices([1,2]) was [0]) and threw on null.
    'indices/1': function*(input, conf, args) {
        for (const needle of args[0].apply(input, conf))
            yield __indices(input, needle)
    },
    // jq's def index($i): indices($i) | .[0], and rindex's .[-1:][0].
    'index/1': function*(input, conf, args) {
        for (const needle of args[0].apply(input, conf))
            yield __firstOrLast(__indices(input, needle), false)
    },
    'rindex/1': function*(input, conf, args) {
        for (const needle of args[0].apply(input, conf))
            yield __firstOrLast(__indices(input, needle), true)
    },
    // error(null) raises nothing and gives nothing, as in jackson-jq (ErrorFunction: a null message returns without
    // output), which Conductor runs: if .ok then . else error(.body.message) end with no message gives no value there,
    // where jqjs failed the task with "null (not a string)". jq 1.6 gives nothing too ([error(null), 1] is [1]).
    'error/0': function*(input) {
        if (input !== null)
            throw new JqError(input)
    },
    // A filter's only input is the task's: there is never a next one.
    'input/0': function*() {
        throw 'No more inputs'
    },
    'inputs/0': function*() {
    },
    'error/1': Object.assign(function*(input, conf, args) {
        for (let message of args[0].apply(input, conf))
            if (message !== null)
                throw new JqError(message)
    }, {params: [{mode: 'defer'}]}),
    // jqjs parsed with parseFloat: "x" gave null and "12abc" 12.
    'tonumber/0': function*(input) {
        if (typeof input == 'number')
            return yield input
        if (typeof input == 'string' && /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(input))
            return yield Number(input)
        throw nameType(input) + ' (' + JSON.stringify(input) + ') cannot be parsed as a number'
    },
    // Only a string is parsed, as in jq and jackson-jq (FromJsonFunction: "%s only strings can be parsed"); jqjs handed
    // anything to JSON.parse, so .body | fromjson on a missing body (null) gave null, and 5 gave 5, where Conductor fails.
    'fromjson/0': function*(input) {
        if (typeof input != 'string')
            throw __described(input) + ' only strings can be parsed'
        yield JSON.parse(input)
    },
    // Both strings or an error, as jq and jackson-jq (AbstractStartsEndsWithFunction) have it; jqjs called the input's
    // startsWith: a numeric status code (.statusCode | startswith("2")) failed with "not a function", and a number
    // as the prefix was read as text ("42" | startswith(4) was true).
    'startswith/1': function*(input, conf, args) {
        for (let v of args[0].apply(input, conf)) {
            if (typeof input != 'string' || typeof v != 'string')
                throw 'startswith() requires string inputs'
            yield input.startsWith(v)
        }
    },
    'endswith/1': function*(input, conf, args) {
        for (let v of args[0].apply(input, conf)) {
            if (typeof input != 'string' || typeof v != 'string')
                throw 'endswith() requires string inputs'
            yield input.endsWith(v)
        }
    },
    // jq's def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row|idx_expr|tostring] |= $row), in one pass
    // over one object: jqjs's [stream | {(f): .}] | add made a key of a number only while object construction took
    // any key, and copied the object it built at every row.
    'INDEX/2': Object.assign(function*(input, conf, args) {
        yield __indexed(args[0].apply(input, conf), args[1], conf)
    }, {params: [{label: 'stream'}, {label: 'idx_expr'}]}),
    'INDEX/1': Object.assign(function*(input, conf, args) {
        if (nameType(input) != 'array' && nameType(input) != 'object')
            throw 'Cannot iterate over ' + __described(input)
        yield __indexed(Object.values(input), args[0], conf)
    }, {params: [{label: 'idx_expr'}]}),
    // jq's def add: reduce .[] as $x (null; . + $x), in one pass: jqjs's copied the sum at every element, so adding up
    // the usual map({(.id): .name}) of 5,000 items copied thousands of keys 5,000 times (about 2 s, unseen by the
    // budget, which counts interpreter steps, not a copy's); arrays the same.
    'add/0': function*(input) {
        if (nameType(input) != 'array' && nameType(input) != 'object')
            throw 'Cannot iterate over ' + __described(input)
        yield __sum(Array.isArray(input) ? input : Object.values(input))
    },
    // jq gives anything but a string back unchanged; jqjs raised an error.
    'ltrimstr/1': Object.assign(function*(input, conf, args) {
        for (let s of args[0].apply(input, conf))
            yield typeof input == 'string' && typeof s == 'string' && input.startsWith(s) ? input.slice(s.length) : input
    }, {params: [{label: 'prefix'}]}),
    'rtrimstr/1': Object.assign(function*(input, conf, args) {
        for (let s of args[0].apply(input, conf))
            yield typeof input == 'string' && typeof s == 'string' && s.length > 0 && input.endsWith(s) ? input.slice(0, -s.length) : input
    }, {params: [{label: 'suffix'}]}),
    // jqjs took the regex as the flags.
    'test/2': Object.assign(function*(input, conf, args) {
        for (let flags of args[1].apply(input, conf))
            for (let regexp of args[0].apply(input, conf))
                yield __jqRegExp(regexp, flags, '').test(input)
    }, {params: [{label: 'regex'}, {label: 'flags'}]}),
    // jq takes the flags in an array too (test(["^a", "i"])), and matches strings only; jqjs took the array as the regex.
    'test/1': Object.assign(function*(input, conf, args) {
        for (let re of args[0].apply(input, conf)) {
            if (typeof input != 'string')
                throw nameType(input) + ' (' + JSON.stringify(input) + ') cannot be matched, as it is not a string'
            const [regexp, flags] = Array.isArray(re) ? [re[0], re[1] || ''] : [re, '']
            yield __jqRegExp(regexp, flags, '').test(input)
        }
    }, {params: [{label: 'regex'}]}),
    // jq 1.7's: counts down with a negative step and gives nothing for a step of 0; jqjs only counted up.
    'range/3': function*(input, conf, args) {
        for (let from of args[0].apply(input, conf))
            for (let upto of args[1].apply(input, conf))
                for (let by of args[2].apply(input, conf)) {
                    if (by > 0)
                        for (let i = from; i < upto; i += by) yield i
                    else if (by < 0)
                        for (let i = from; i > upto; i += by) yield i
                }
    },
    // jq's: null stays null down any path (so getpath on null, or through a missing field, is null), a negative index
    // counts from the end, and indexing a scalar is an error; jqjs refused null input and failed on a null midway.
    'getpath/1': Object.assign(function*(input, conf, args) {
        for (let path of args[0].apply(input, conf)) {
            if (!Array.isArray(path))
                throw 'Path must be specified as an array'
            yield __getPath(input, path)
        }
    }, {params: [{label: 'paths'}]}),
    // getpath(p) is a path expression too, as in jq and jackson-jq (GetPathFunction emits its path): getpath(p) |= f and
    // getpath(p) = v update the value at a path computed at run time; jqjs had no paths for it ("no paths for
    // getpath/1"). The path is read first, so one through a number or a string fails as getpath does.
    'getpath/1-paths': function*(input, conf, args) {
        for (let path of args[0].apply(input, conf)) {
            if (!Array.isArray(path))
                throw 'Path must be specified as an array'
            __getPath(input, path)
            yield path
        }
    },
    // jqjs logged each match to a console the sandbox does not have, and called a missing String.gsub for "g". jq's
    // def scan(re; $flags): match(re; "g" + $flags) | if (.captures | length > 0) then [.captures | .[] | .string]
    // else .string end (so no empty match at the input's end, as in match).
    'scan/2': Object.assign(function*(input, conf, args) {
        for (let re of args[0].apply(input, conf))
            for (let flags of args[1].apply(input, conf))
                for (const m of __matches(input, re, 'g' + (flags || '')))
                    yield m.captures.length > 0 ? m.captures.map(c => c.string) : m.string
    }, {params: [{label: 'regex'}, {label: 'flags'}]}),
    // gsub replaces every match whatever its flags; with "i", jqjs replaced the first only.
    'gsub/3': Object.assign(function*(input, conf, args) {
        let flags = args[2].apply(input, conf).next().value || ''
        if (!flags.includes('g')) flags += 'g'
        yield* sub(input, conf, args[0], args[1], flags)
    }, {params: [{label: 'regex'}, {label: 'tostring'}, {label: 'flags'}]}),
    'keys_unsorted/0': function*(input) {
        if (nameType(input) != 'object' && nameType(input) != 'array')
            throw nameType(input) + ' has no keys'
        yield Array.isArray(input) ? input.map((_, i) => i) : Object.keys(input)
    },
    'utf8bytelength/0': function*(input) {
        if (typeof input != 'string')
            throw nameType(input) + ' only strings have UTF-8 byte length'
        yield __utf8Bytes(input).length
    },
    'toarray/0': function*(input) {
        yield Array.isArray(input) ? input : [input]
    },
    'gmtime/0': function*(input) {
        if (typeof input != 'number')
            throw 'gmtime() requires a number'
        yield __brokenDown(input)
    },
    'mktime/0': function*(input) {
        if (!Array.isArray(input))
            throw 'mktime requires array of 6 numbers'
        yield Math.floor(__secondsOf(input, 'mktime'))
    },
    // jq 1.6's from_entries: the key from key, k, name, Name, K or Key (the first neither null nor false; a key that is
    // no string is its JSON), the value from value, else v. jqjs read key and value only: {name, value} gave
    // {"undefined": …}.
    'from_entries/0': function*(input) {
        const t = nameType(input)
        if (t != 'array' && t != 'object')
            throw 'Cannot iterate over ' + t
        const out = {}
        for (const entry of Object.values(input)) {
            const et = nameType(entry)
            if (et != 'object')
                throw et == 'null' ? 'Cannot check whether null has a string key' : 'Cannot index ' + et + ' with "key"'
            let key = null
            for (const name of ['key', 'k', 'name', 'Name', 'K', 'Key']) {
                key = Object.hasOwn(entry, name) ? entry[name] : null
                if (key !== null && key !== false)
                    break
            }
            const value = Object.hasOwn(entry, 'value') ? entry.value : Object.hasOwn(entry, 'v') ? entry.v : null
            __setKey(out, typeof key == 'string' ? key : JSON.stringify(key), value)
        }
        yield out
    },
    'delpaths/1': Object.assign(function*(input, conf, args) {
        for (const paths of args[0].apply(input, conf)) {
            if (!Array.isArray(paths))
                throw 'Paths must be specified as an array'
            if (!paths.every(Array.isArray))
                throw 'Path must be specified as an array'
            yield paths.some(path => path.length == 0) ? null : paths.length == 0 ? input : __deletePaths(input, paths)
        }
    }, {params: [{label: 'paths'}]}),
    // jq's def transpose: a row per column of the longest row, nulls where a row is shorter; jqjs made a square of the
    // longest row's length, so three rows of two gave two rows of two.
    'transpose/0': function*(input) {
        if (nameType(input) != 'array')
            throw 'Cannot iterate over ' + nameType(input)
        const width = Math.max(0, ...input.map(row => {
            if (row !== null && !Array.isArray(row))
                throw 'Cannot index ' + nameType(row) + ' with number'
            return row === null ? 0 : row.length
        }))
        const out = []
        for (let j = 0; j < width; j++)
            out.push(input.map(row => row === null || row[j] === undefined ? null : row[j]))
        yield out
    },
    // jq's split/1: an empty string splits into no parts (jqjs gave [""], so "" | split(",") | length was 1), and an
    // empty separator into characters (code points: jqjs cut an emoji into its two UTF-16 halves).
    'split/1': Object.assign(function*(input, conf, args) {
        for (const sep of args[0].apply(input, conf)) {
            if (typeof input != 'string' || typeof sep != 'string')
                throw 'split input and separator must be strings'
            yield input == '' ? [] : sep == '' ? Array.from(input) : input.split(sep)
        }
    }, {params: [{label: 'separator'}]}),
    // jq's length: a string's in characters (code points; jqjs counted UTF-16 units, so an emoji was 2) and a number's
    // absolute value (jqjs raised an error).
    'length/0': function*(input) {
        const t = nameType(input)
        if (t == 'string') {
            let n = 0
            for (const _ of input)
                n++
            return yield n
        }
        if (t == 'array')
            return yield input.length
        if (t == 'object')
            return yield Object.keys(input).length
        if (t == 'null')
            return yield 0
        if (t == 'number')
            return yield Math.abs(input)
        throw t + ' (' + JSON.stringify(input) + ') has no length'
    },
    // Code points, as jq's explode gives them (jqjs gave an emoji's two UTF-16 halves).
    'explode/0': function*(input) {
        if (typeof input != 'string')
            throw 'explode input must be a string'
        yield Array.from(input, c => c.codePointAt(0))
    },
    // jq's limit stops f once it has given n values, without asking it for one more (jqjs did: limit(1; .[] | f)
    // ran f on the second element, and failed on its error); a negative n takes every value, as jq's does.
    'limit/2': Object.assign(function*(input, conf, args) {
        for (const n of args[0].apply(input, conf)) {
            if (typeof n != 'number')
                throw 'Invalid limit: ' + nameType(n)
            if (n < 0) {
                yield* args[1].apply(input, conf)
                continue
            }
            if (n == 0)
                continue
            let count = 0
            for (const v of args[1].apply(input, conf)) {
                yield v
                if (++count >= n)
                    break
            }
        }
    }, {params: [{label: 'n'}, {label: 'expr'}]}),
    // jq's def fromdateiso8601: strptime("%Y-%m-%dT%H:%M:%SZ") | mktime, and fromdate the same: jqjs read the string
    // with JavaScript's Date, so a string that is no date gave NaN (null in the output) instead of an error, and other
    // forms (a date alone, an offset, a local time) were read where jq and jackson-jq (Instant.parse of at most 20
    // characters) refuse them.
    'fromdateiso8601/0': function*(input) {
        if (typeof input != 'string')
            throw 'strptime/1 requires string inputs and arguments'
        yield Math.floor(__secondsOf(__strptime(input, '%Y-%m-%dT%H:%M:%SZ'), 'mktime'))
    },
    'fromdate/0': function*(input) {
        yield* functions['fromdateiso8601/0'](input)
    },
    'strftime/1': __withFormat(__strftime, 'strftime/1 requires a string format'),
    'strptime/1': __withFormat(__strptime, 'strptime/1 requires string inputs and arguments'),
})

// error raises in a path expression as anywhere (jq's path(error("x")) raises "x"): it said "no paths for error/1",
// so (if .ok then .a else error("no a") end) |= 1 failed with that, and a catch handler's error was lost in it.
functions['error/0-paths'] = functions['error/0']
functions['error/1-paths'] = functions['error/1']

// --- Numbers: C's rounding and the libm functions jq has that JavaScript's Math lacks ---

// C's round: halves away from zero (round(-2.5) is -3); Math.round rounds them up (-2).
function __roundHalfAway(x) {
    return x < 0 ? -Math.round(-x) : Math.round(x)
}

// C's rint and nearbyint in the default mode: halves to the even neighbour (2.5 is 2, 3.5 is 4).
function __roundHalfEven(x) {
    const r = Math.round(x)
    return r - x == 0.5 && r % 2 != 0 ? r - 1 : r
}

// x as m × 2^e with 1 <= |m| < 2 (or x itself when 0 or not finite): significand's m and logb's e.
function __binaryExponent(x) {
    return x == 0 || !isFinite(x) ? 0 : Math.floor(Math.log2(Math.abs(x)))
}

function __numbers1(f) {
    return function*(input) {
        if (typeof input != 'number')
            throw nameType(input) + ' (' + JSON.stringify(input) + ') number required'
        yield f(input)
    }
}

function __numbers2(f) {
    return function*(input, conf, args) {
        for (const a of args[0].apply(input, conf))
            for (const b of args[1].apply(input, conf)) {
                if (typeof a != 'number' || typeof b != 'number')
                    throw nameType(typeof a != 'number' ? a : b) + ' number required'
                yield f(a, b)
            }
    }
}

const __scaleByPowerOfTwo = (x, e) => x * Math.pow(2, Math.trunc(e))

Object.assign(functions, {
    'round/0': __numbers1(__roundHalfAway),
    'rint/0': __numbers1(__roundHalfEven),
    'nearbyint/0': __numbers1(__roundHalfEven),
    'exp10/0': __numbers1(x => Math.pow(10, x)),
    'exp2/0': __numbers1(x => Math.pow(2, x)),
    // [m, e] with x = m × 2^e and 0.5 <= |m| < 1 (C's frexp), [0, 0] for 0.
    'frexp/0': __numbers1(x => x == 0 || !isFinite(x) ? [x, 0] : [x / Math.pow(2, __binaryExponent(x) + 1), __binaryExponent(x) + 1]),
    // [fraction, integer part], both with x's sign (C's modf).
    'modf/0': __numbers1(x => isFinite(x) ? [x - Math.trunc(x), Math.trunc(x)] : [0, x]),
    'significand/0': __numbers1(x => x == 0 || !isFinite(x) ? x : x / Math.pow(2, __binaryExponent(x))),
    'logb/0': __numbers1(x => x == 0 ? -Infinity : !isFinite(x) ? Math.abs(x) : __binaryExponent(x)),
    'copysign/2': __numbers2((x, y) => Math.abs(x) * (y < 0 || Object.is(y, -0) ? -1 : 1)),
    'ldexp/2': __numbers2(__scaleByPowerOfTwo),
    'scalb/2': __numbers2(__scaleByPowerOfTwo),
    'scalbln/2': __numbers2(__scaleByPowerOfTwo),
    // C's drem (remainder): x - n×y with n the nearest integer to x/y, halves to even.
    'drem/2': __numbers2((x, y) => y == 0 ? NaN : x - __roundHalfEven(x / y) * y),
})

// jq writes booleans into @csv and @tsv rows, as true and false; jqjs refused them. A nan cell is left empty, as a
// null one, as jq 1.6's f_format and jackson-jq's AbstractSvFilter do (it was written NaN).
function __rowFormat(name, separator, text) {
    return function(v) {
        if (nameType(v) != 'array')
            throw 'cannot ' + name + '-format ' + nameType(v) + ', only array'
        return v.map(x => {
            if (typeof x == 'string')
                return text(x)
            if (x === null || Number.isNaN(x))
                return ''
            if (typeof x == 'number' || typeof x == 'boolean')
                return String(x)
            throw 'type ' + nameType(x) + ' not valid in a ' + name + ' row'
        }).join(separator)
    }
}

formats.csv = __rowFormat('csv', ',', x => '"' + x.replace(/"/g, '""') + '"')
// jq 1.6's @tsv escapes the backslash, tab, newline and carriage return only; jqjs's escaped as JSON does.
const __TSV_ESCAPES = {'\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r'}
formats.tsv = __rowFormat('tsv', '\t', x => x.replace(/[\\\t\n\r]/g, c => __TSV_ESCAPES[c]))

// jq 1.6's own definitions, which read a missing value (null) as jq does: jqjs's threw on null ("can only get first
// element of arrays, not null") where jq answers null (reverse: []), and its nth refused a negative index.
defineShorthandFunction('first', [], '.[0]')
defineShorthandFunction('last', [], '.[-1]')
defineShorthandFunction('nth', 'n', '.[n]')
defineShorthandFunction('reverse', [], 'if . == null then [] else [.[length - 1 - range(0; length)]] end')
// todate formats a broken-down time too (strptime's, gmtime's), as jq's def todate: strftime(...) does.
defineShorthandFunction('todate', [], 'strftime("%Y-%m-%dT%H:%M:%SZ")')
defineShorthandFunction('todateiso8601', [], 'strftime("%Y-%m-%dT%H:%M:%SZ")')

// jq's del; jqjs's was f |= empty, which deletes one path after another, so del(.[1, 2]) removed the 2nd and 4th.
defineShorthandFunction('del', 'f', 'delpaths([path(f)])')
// --- isinfinite, isfinite, isnan and isnormal as jq 1.6's: false on anything not a number, nan neither infinite nor
// normal (but finite), zero and subnormals not normal. jqjs took isinfinite as !Number.isFinite, so nan, null and
// strings were infinite, and isnormal as finite, so 0 was normal; now that an assignment keeps nan (1de73e1 and its
// copies), select(.x | isinfinite | not) would drop a nan it kept. ---

Object.assign(functions, {
    'isinfinite/0': function*(input) {
        yield input === Infinity || input === -Infinity
    },
    'isfinite/0': function*(input) {
        yield typeof input == 'number' && input !== Infinity && input !== -Infinity
    },
    'isnan/0': function*(input) {
        yield typeof input == 'number' && Number.isNaN(input)
    },
    'isnormal/0': function*(input) {
        // DBL_MIN, the least normal double: below it (and 0) C's isnormal is false.
        yield typeof input == 'number' && Number.isFinite(input) && Math.abs(input) >= 2.2250738585072014e-308
    },
})

defineShorthandFunction('leaf_paths', [], 'paths(scalars)')
defineShorthandFunction('localtime', [], 'gmtime')
defineShorthandFunction('strflocaltime', 'f', 'strftime(f)')

// --- Names, checked when a filter is compiled: jq 1.6 refuses a call of a function that is not defined with that many
// arguments (map(1; 2), foo), a variable nothing binds ($nope) and a break without its label (its compile errors,
// before any input is read); jqjs found each only when it was reached, so a filter with a misspelt name was accepted
// at registration and failed (or, in a branch seldom taken, passed) at run time. A builtin of jq 1.6 that jqjs lacks is
// left to fail when it runs, as before: jq 1.6 compiles it, and jackson-jq (Conductor's jq) has many of them. ---

const __JQ16_BUILTINS = new Set(('IN/1 IN/2 INDEX/1 INDEX/2 JOIN/2 JOIN/3 JOIN/4 acos/0 acosh/0 add/0 all/0 all/1 all/2 any/0 ' +
    'any/1 any/2 arrays/0 ascii_downcase/0 ascii_upcase/0 asin/0 asinh/0 atan/0 atan2/2 atanh/0 booleans/0 bsearch/1 ' +
    'builtins/0 capture/1 capture/2 cbrt/0 ceil/0 combinations/0 combinations/1 contains/1 copysign/2 cos/0 cosh/0 ' +
    'debug/0 del/1 delpaths/1 drem/2 empty/0 endswith/1 env/0 erf/0 erfc/0 error/0 error/1 exp/0 exp10/0 exp2/0 ' +
    'explode/0 expm1/0 fabs/0 fdim/2 finites/0 first/0 first/1 flatten/0 flatten/1 floor/0 fma/3 fmax/2 fmin/2 fmod/2 ' +
    'format/1 frexp/0 from_entries/0 fromdate/0 fromdateiso8601/0 fromjson/0 fromstream/1 gamma/0 get_jq_origin/0 ' +
    'get_prog_origin/0 get_search_list/0 getpath/1 gmtime/0 group_by/1 gsub/2 gsub/3 halt/0 halt_error/0 halt_error/1 ' +
    'has/1 hypot/2 implode/0 in/1 index/1 indices/1 infinite/0 input/0 input_filename/0 input_line_number/0 inputs/0 ' +
    'inside/1 isempty/1 isfinite/0 isinfinite/0 isnan/0 isnormal/0 iterables/0 j0/0 j1/0 jn/2 join/1 keys/0 ' +
    'keys_unsorted/0 last/0 last/1 ldexp/2 leaf_paths/0 length/0 lgamma/0 lgamma_r/0 limit/2 localtime/0 log/0 log10/0 ' +
    'log1p/0 log2/0 logb/0 ltrimstr/1 map/1 map_values/1 match/1 match/2 max/0 max_by/1 min/0 min_by/1 mktime/0 modf/0 ' +
    'modulemeta/0 nan/0 nearbyint/0 nextafter/2 nexttoward/2 normals/0 not/0 now/0 nth/1 nth/2 nulls/0 numbers/0 ' +
    'objects/0 path/1 paths/0 paths/1 pow/2 pow10/0 range/1 range/2 range/3 recurse/0 recurse/1 recurse/2 ' +
    'recurse_down/0 remainder/2 repeat/1 reverse/0 rindex/1 rint/0 round/0 rtrimstr/1 scalars/0 scalars_or_empty/0 ' +
    'scalb/2 scalbln/2 scan/1 select/1 setpath/2 significand/0 sin/0 sinh/0 sort/0 sort_by/1 split/1 split/2 splits/1 ' +
    'splits/2 sqrt/0 startswith/1 stderr/0 strflocaltime/1 strftime/1 strings/0 strptime/1 sub/2 sub/3 tan/0 tanh/0 ' +
    'test/1 test/2 tgamma/0 to_entries/0 todate/0 todateiso8601/0 tojson/0 tonumber/0 tostream/0 tostring/0 ' +
    'transpose/0 trunc/0 truncate_stream/1 type/0 unique/0 unique_by/1 until/2 utf8bytelength/0 values/0 walk/1 ' +
    'while/2 with_entries/1 y0/0 y1/0 yn/2').split(' '))

// The variables jq 1.6 defines around every program: $ARGS, which jqjs lacks, fails only when it runs, as a builtin
// jqjs lacks does (jq 1.6 compiles it).
const __JQ16_GLOBAL_VARIABLES = new Set(['ENV', '__loc__', 'ARGS'])

// The names a scope sees, each over its parent's: its functions as name/arity (whether one was called: {used}), its
// variables and its labels.
function __childScope(scope, funcs = [], vars = [], labels = []) {
    const child = {funcs: Object.create(scope.funcs), vars: Object.create(scope.vars), labels: Object.create(scope.labels)}
    for (const f of funcs) child.funcs[f] = {used: false}
    for (const v of vars) child.vars[v] = true
    for (const l of labels) child.labels[l] = true
    return child
}

// The expressions inside a pattern (the keys of {(expr): $v}), which run in the scope around it.
function __checkPatternNames(pattern, scope) {
    if (typeof pattern == 'string')
        return
    if (pattern.kind == 'array')
        return pattern.items.forEach(item => __checkPatternNames(item, scope))
    for (const entry of pattern.entries) {
        if (entry.keyNode !== undefined)
            __checkNames(entry.keyNode, scope)
        if (entry.sub !== undefined)
            __checkPatternNames(entry.sub, scope)
    }
}

// Throws jq's compile error for the first name in node that scope does not define.
function __checkNames(node, scope) {
    if (node === null || typeof node != 'object')
        return
    if (Array.isArray(node))
        return node.forEach(n => __checkNames(n, scope))
    if (node instanceof FunctionCall) {
        const defined = scope.funcs[node.name]
        if (defined !== undefined)
            defined.used = true
        else if (!Object.hasOwn(functions, node.name) && !__JQ16_BUILTINS.has(node.name))
            throw node.name + ' is not defined'
        return __checkNames(node.args, scope)
    }
    if (node instanceof VariableReference) {
        if (!(node.name in scope.vars) && !__JQ16_GLOBAL_VARIABLES.has(node.name))
            throw '$' + node.name + ' is not defined'
        return
    }
    if (node instanceof BreakNode) {
        if (!(node.label in scope.labels))
            throw 'break $' + node.label + ' has no label $' + node.label + ' around it'
        return
    }
    if (node instanceof LabelNode)
        return __checkNames(node.body, __childScope(scope, [], [], [node.label]))
    if (node instanceof PipeNode && node.lhs instanceof VariableBinding) {
        __checkNames(node.lhs, scope)
        return __checkNames(node.rhs, __childScope(scope, [], __patternNames(node.lhs.name)))
    }
    if (node instanceof VariableBinding) {
        __checkNames(node.value, scope)
        return __checkPatternNames(node.name, scope)
    }
    if (node instanceof ReduceNode || node instanceof ForeachNode) {
        __checkNames(node.generator, scope)
        __checkPatternNames(node.name, scope)
        __checkNames(node.init, scope)
        const inner = __childScope(scope, [], __patternNames(node.name))
        if (node instanceof ReduceNode)
            return __checkNames(node.expr, inner)
        __checkNames(node.update, inner)
        return __checkNames(node.extract, inner)
    }
    // A def's body is checked only when something calls it, as jq 1.6 drops a def nothing calls before it looks up
    // names (def f: foo; 1 compiles there): the rest first, which may call it, and only then its body.
    if (node instanceof __DefNode) {
        const withDef = __childScope(scope, [node.name])
        __checkNames(node.rest, withDef)
        if (withDef.funcs[node.name].used)
            __checkNames(node.body, __childScope(withDef, node.params.map(p => p + '/0')))
        return
    }
    // Any other node: its parts (nodes, lists of them, and the {key, value} fields of an object), in the same scope.
    for (const part of Object.values(node))
        __checkNames(part, scope)
}

// jqjs reads a missing expression as an empty one (an empty FilterNode, which gives no value): .a |, 1 +, 1, and (),
// {a: }, try, def f: ; all compiled and gave nothing, where jq 1.6 refuses them as syntax errors. Only [] holds one
// rightly, and the program itself, which may be empty or only defs (jq 1.6 runs those as .: see __compileProgram).
function __isMissing(node) {
    return node instanceof FilterNode && !node.filter
}

// The parse tree keeps no token locations, and its nodes' text is not always jq's, so the message shows the usual causes.
function __checkNoMissingExpression(node, parent) {
    if (node === null || typeof node != 'object')
        return
    if (Array.isArray(node))
        return node.forEach(n => __checkNoMissingExpression(n, parent))
    if (__isMissing(node) && !(parent instanceof ArrayNode))
        throw 'syntax error: an expression is missing: after | , = or an operator (.a |, 1 +), before one (| .a), or between brackets (map(), {a: })'
    for (const part of Object.values(node))
        __checkNoMissingExpression(part, node)
}

// The filter compiled as jq 1.6 runs it: a program that is empty or only defs (def f: 1;) is ., where jqjs ran the
// empty expression after the defs, which gives no value (the task completed with a null result). Defs in brackets,
// (def f: 1;), are not the program's own: they stay a missing expression, which the compile check refuses.
function __compileProgram(filter) {
    const compiled = compile(filter)
    let lastDef = null
    let program = compiled.filter.node
    while (program instanceof __DefNode && !program.bracketed) {
        lastDef = program
        program = program.rest
    }
    if (__isMissing(program)) {
        if (lastDef)
            lastDef.rest = new IdentityNode()
        else
            compiled.filter.node = new IdentityNode()
    }
    return compiled
}

// The compile check, as jq 1.6's: the filter parses, no expression in it is missing, and every name in it is defined
// where it is used.
function __compileChecked(filter) {
    const compiled = __compileProgram(filter)
    let program = compiled.filter.node
    while (program instanceof __DefNode) {
        __checkNoMissingExpression(program.body, program)
        program = program.rest
    }
    __checkNoMissingExpression(program, null)
    __checkNames(compiled.filter.node, {funcs: Object.create(null), vars: Object.create(null), labels: Object.create(null)})
    return compiled
}
`;
