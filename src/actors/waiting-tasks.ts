/**
 * Tasks of one execution waiting for their side effect to start (see `WorkflowExecution.#startWaiting`), by task id, in
 * the order they were put in (a Map's), each with the HTTP requests its start sends (0 for a task of another type).
 *
 * It counts the waiting tasks that send no request: once the HTTP tasks wait for a connection, only those can still
 * start, and a look through the rest stops when none is left. A fork of a thousand HTTP tasks behind six connections
 * otherwise went through every waiting task at each dispatch and each answer (about a million steps for the fork).
 */
export class WaitingTasks<V extends { readonly requests: number }> extends Map<string, V> {
  #withoutRequests = 0;

  /** Empty: Map's constructor would `set` its entries before {@link WaitingTasks.#withoutRequests} exists, and throw. */
  constructor() {
    super();
  }

  /** How many of the waiting tasks send no HTTP request (child starts, tasks refused a subrequest). */
  get withoutRequests(): number {
    return this.#withoutRequests;
  }

  override set(taskId: string, waiting: V): this {
    const before = super.get(taskId);
    if (before !== undefined && before.requests === 0) this.#withoutRequests--;
    if (waiting.requests === 0) this.#withoutRequests++;
    return super.set(taskId, waiting);
  }

  override delete(taskId: string): boolean {
    const before = super.get(taskId);
    if (before !== undefined && before.requests === 0) this.#withoutRequests--;
    return super.delete(taskId);
  }

  override clear(): void {
    this.#withoutRequests = 0;
    super.clear();
  }
}
