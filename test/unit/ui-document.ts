// A stand-in document just big enough for ui/lib/dom.js's builder, for the UI modules run in Node by the ui-*.test.ts
// files: elements with children, text, attributes, classes, and click and submit listeners.
import { afterAll, vi } from "vitest";

/** A node of the stand-in document: children and text, nothing else. */
export class FakeNode {
  readonly childNodes: FakeNode[] = [];
  appendChild(child: FakeNode): FakeNode {
    this.childNodes.push(child);
    return child;
  }
  /** As the DOM's: nodes, and strings as text. */
  append(...children: Array<FakeNode | string>): void {
    for (const child of children) this.appendChild(typeof child === "string" ? new FakeText(child) : child);
  }
  get firstChild(): FakeNode | null {
    return this.childNodes[0] ?? null;
  }
  /** As the DOM's: before `reference`, or last when it is null. */
  insertBefore(child: FakeNode, reference: FakeNode | null): FakeNode {
    const index = reference === null ? -1 : this.childNodes.indexOf(reference);
    this.childNodes.splice(index < 0 ? this.childNodes.length : index, 0, child);
    return child;
  }
  removeChild(child: FakeNode): FakeNode {
    this.childNodes.splice(this.childNodes.indexOf(child), 1);
    return child;
  }
  get textContent(): string {
    return this.childNodes.map((child) => child.textContent).join("");
  }
}
export class FakeText extends FakeNode {
  constructor(readonly data: string) {
    super();
  }
  override get textContent(): string {
    return this.data;
  }
}
export class FakeElement extends FakeNode {
  className = "";
  /** An input's or a textarea's text, empty as a new one's. */
  value = "";
  private readonly attributes = new Map<string, string>();
  private readonly listeners: Array<[string, (event?: unknown) => unknown]> = [];
  constructor(readonly tagName: string) {
    super();
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }
  addEventListener(type: string, listener: (event?: unknown) => unknown): void {
    this.listeners.push([type, listener]);
  }
  click(): void {
    for (const [type, listener] of this.listeners) if (type === "click") listener();
  }
  override get textContent(): string {
    return super.textContent;
  }
  /** As the DOM's: the text replaces the children. */
  override set textContent(text: string) {
    this.childNodes.splice(0, this.childNodes.length, ...(text === "" ? [] : [new FakeText(text)]));
  }
  /** Submits a form: runs its submit listeners (with an event whose default can be prevented) and awaits them. */
  async submit(): Promise<void> {
    const event = { preventDefault: () => {} };
    for (const [type, listener] of this.listeners) if (type === "submit") await listener(event);
  }
  hasClass(name: string): boolean {
    return this.className.split(" ").includes(name);
  }
  get children(): FakeElement[] {
    return this.childNodes.filter((child): child is FakeElement => child instanceof FakeElement);
  }
  /** Every element below this one, depth first, in document order. */
  descendants(): FakeElement[] {
    return this.children.flatMap((child) => [child, ...child.descendants()]);
  }
}

/** Makes `document` and `Node` the stand-ins for the calling test file (call it before importing a UI module). */
export function installFakeDocument(): void {
  vi.stubGlobal("Node", FakeNode);
  vi.stubGlobal("document", { createElement: (tag: string) => new FakeElement(tag), createTextNode: (data: string) => new FakeText(data) });
  afterAll(() => void vi.unstubAllGlobals());
}
