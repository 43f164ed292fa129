/**
 * A suffix automaton (Blumer et al.; the "DAWG" of a text): the smallest automaton reading exactly the substrings of a
 * sequence of code units, built in time and space linear in its length (at most 2n states). Masked-reason.ts builds one
 * over a failure reason (a few thousand characters) and reads the masked values through it, so that looking for every
 * masked value in the reason costs the reason's length plus the values' total length, never their product.
 */

/** A unit no text holds (UTF-16 code units stop at 0xffff): it separates the texts of one automaton. */
export const SEPARATOR = 0x10000;

/** The automaton of one sequence of code units (UTF-16 units, or {@link SEPARATOR}). */
export class SuffixAutomaton {
  /** The longest string each state reads. */
  readonly longest: number[] = [0];
  /** Each state's suffix link: the state of its longest suffix that ends in more places (-1 for the start). */
  readonly link: number[] = [-1];
  readonly next: Map<number, number>[] = [new Map()];
  /** The state of each prefix: `prefixEnds[i]` reads the first i + 1 units. */
  readonly prefixEnds: number[] = [];
  #last = 0;

  constructor(units: Iterable<number>) {
    for (const unit of units) this.#extend(unit);
  }

  /** How many states it has. */
  get size(): number {
    return this.longest.length;
  }

  /** The state reached reading `text` from the start, -1 when `text` is no substring. */
  stateOf(text: string): number {
    let state = 0;
    for (let at = 0; at < text.length && state !== -1; at++) state = this.next[state]!.get(text.charCodeAt(at)) ?? -1;
    return state;
  }

  /** The states ordered by the longest string they read, shortest first (a state's link comes before it). */
  byLength(): number[] {
    const counts = new Array<number>(this.longest[this.#last]! + 2).fill(0);
    for (const length of this.longest) counts[length + 1]!++;
    for (let length = 1; length < counts.length; length++) counts[length]! += counts[length - 1]!;
    const order = new Array<number>(this.size);
    this.longest.forEach((length, state) => (order[counts[length]!++] = state));
    return order;
  }

  #add(longest: number, link: number, next: Map<number, number>): number {
    this.longest.push(longest);
    this.link.push(link);
    this.next.push(next);
    return this.longest.length - 1;
  }

  #extend(unit: number): void {
    const { longest, link, next } = this;
    const current = this.#add(longest[this.#last]! + 1, 0, new Map());
    let state = this.#last;
    while (state !== -1 && !next[state]!.has(unit)) {
      next[state]!.set(unit, current);
      state = link[state]!;
    }
    if (state !== -1) {
      const reached = next[state]!.get(unit)!;
      if (longest[state]! + 1 === longest[reached]) link[current] = reached;
      else {
        const clone = this.#add(longest[state]! + 1, link[reached]!, new Map(next[reached]!));
        while (state !== -1 && next[state]!.get(unit) === reached) {
          next[state]!.set(unit, clone);
          state = link[state]!;
        }
        link[reached] = clone;
        link[current] = clone;
      }
    }
    this.#last = current;
    this.prefixEnds.push(current);
  }
}

/** The code units of `text`. */
export function unitsOf(text: string): number[] {
  const units = new Array<number>(text.length);
  for (let at = 0; at < text.length; at++) units[at] = text.charCodeAt(at);
  return units;
}

/**
 * For each prefix of the automaton's sequence, the longest of the marked strings that it ends with (0: none), given
 * `marked[state]`, the longest marked string read by `state` (0: none). A state's strings are suffixes of one another,
 * longer than its link's: the longest marked suffix of a prefix is the first marked state on its links' path.
 */
export function longestMarkedEnding(automaton: SuffixAutomaton, marked: Int32Array): Int32Array {
  const nearest = new Int32Array(automaton.size);
  for (const state of automaton.byLength()) {
    const link = automaton.link[state]!;
    nearest[state] = marked[state]! > 0 || link === -1 ? marked[state]! : nearest[link]!;
  }
  const ending = new Int32Array(automaton.prefixEnds.length);
  automaton.prefixEnds.forEach((state, at) => (ending[at] = nearest[state]!));
  return ending;
}

/**
 * Which states read a string that occurs in one of `texts`, up to what length: `found[state]` is the longest string of
 * `state` that some text holds (its shorter ones, suffixes of it, too). Reads each text once: linear in their total
 * length (the matching statistics of each text against the automaton's sequence).
 */
export function lengthsFoundIn(automaton: SuffixAutomaton, texts: Iterable<string>): Int32Array {
  const { longest, link, next } = automaton;
  const found = new Int32Array(automaton.size);
  for (const text of texts) {
    let state = 0;
    let length = 0;
    for (let at = 0; at < text.length; at++) {
      const unit = text.charCodeAt(at);
      while (state !== 0 && !next[state]!.has(unit)) {
        state = link[state]!;
        length = longest[state]!;
      }
      const reached = next[state]!.get(unit);
      if (reached === undefined) continue;
      state = reached;
      length++;
      if (length > found[state]!) found[state] = length;
    }
  }
  // A state a text reached holds every string of its link's state (suffixes of what it read) whole.
  const order = automaton.byLength();
  for (let index = order.length - 1; index > 0; index--) {
    const state = order[index]!;
    const parent = link[state]!;
    if (found[state]! > 0 && parent > 0) found[parent] = longest[parent]!;
  }
  return found;
}
