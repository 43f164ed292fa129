/**
 * A webhook delivery's count of calls to Cloudflare's services. A delivery runs in one Worker invocation, which
 * Cloudflare refuses past 1,000 such calls on Workers Free (10,000 by default on Paid; D1 has its own count, 50
 * queries on Free and 1,000 on Paid), and one delivery may carry 100 events each completing up to 500 waiting tasks.
 * So each D1 statement and each call to a Durable Object the delivery makes is counted here, and the delivery stops
 * asking waiting tasks before its budget is spent, leaving them to the sender's retry (see docs/reliability.md, Limits
 * on Cloudflare).
 */
/**
 * How many calls a delivery has made, against how many it may make. Only the asking of waiting tasks stops at it (see
 * `completeWaitingTasks`): the tasks that took the event wait no more, so the sender's retry gets further. An event's
 * look-ups, starts and record are counted but never refused for it: the retry would make them again (a batch's events
 * are all sent again) and stop at the same place, every time (finding, not starting again, the workflows of the events
 * before it: see `delivery-memory.ts`). The delivery's memory (claimed before its events, forgotten after) is counted too.
 */
export class CallBudget {
  #used = 0;
  /** Waiting tasks the delivery has asked so far (see `completeWaitingTasks`). */
  tasksAsked = 0;

  constructor(readonly limit: number) {}

  /** Calls made so far. */
  get used(): number {
    return this.#used;
  }

  /** Calls the budget still allows. */
  get left(): number {
    return Math.max(0, this.limit - this.#used);
  }

  /** Counts `calls` about to be made. */
  spend(calls = 1): void {
    this.#used += calls;
  }
}

/** Each counted `env` (a new one per delivery) and the `env` it counts the calls of. */
const uncounted = new WeakMap<Env, Env>();

/**
 * `env` whose D1 databases and Durable Object namespaces count every call against `budget` as they make it: a D1
 * statement run (`first`, `all`, `run`, `raw`, each statement of a `batch`, an `exec`) and any method called on an
 * object's stub. Everything else is `env`'s own.
 */
export function countedEnv(env: Env, budget: CallBudget): Env {
  const wrapped = new Map<PropertyKey, unknown>();
  const proxy = new Proxy(env, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "object" || value === null) return value;
      const known = wrapped.get(property);
      if (known !== undefined) return known;
      const counted = isDatabase(value) ? countedDatabase(value, budget) : isNamespace(value) ? countedNamespace(value, budget) : value;
      wrapped.set(property, counted);
      return counted;
    },
  });
  uncounted.set(proxy, underlyingEnv(env));
  return proxy;
}

/**
 * The `env` a counted one (see {@link countedEnv}) wraps, else `env` itself: the key of the caches kept per `env` (the
 * configuration, the signing keys), which a delivery's new counted `env` would otherwise miss, parsing the configuration
 * again and logging its once-per-isolate lines on every delivery.
 */
export function underlyingEnv(env: Env): Env {
  return uncounted.get(env) ?? env;
}

function isDatabase(value: object): value is D1Database {
  return typeof (value as Partial<D1Database>).prepare === "function" && typeof (value as Partial<D1Database>).batch === "function";
}

function isNamespace(value: object): value is DurableObjectNamespace {
  return typeof (value as Partial<DurableObjectNamespace>).idFromName === "function" && typeof (value as Partial<DurableObjectNamespace>).get === "function";
}

const RUNS = new Set<PropertyKey>(["first", "all", "run", "raw"]);

function countedDatabase(db: D1Database, budget: CallBudget): D1Database {
  // D1's batch takes its own statements: the counted ones are unwrapped for it.
  const originals = new WeakMap<object, D1PreparedStatement>();
  const statement = (real: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(real, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...values: unknown[]) => statement(target.bind(...values));
        if (RUNS.has(property)) {
          return (...args: unknown[]) => {
            budget.spend();
            return Reflect.apply(value, target, args);
          };
        }
        return (...args: unknown[]) => Reflect.apply(value, target, args);
      },
    });
    originals.set(proxy, real);
    return proxy;
  };
  return new Proxy(db, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "prepare") return (query: string) => statement(target.prepare(query));
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          budget.spend(statements.length);
          return target.batch(statements.map((one) => originals.get(one) ?? one));
        };
      }
      if (property === "exec") {
        return (query: string) => {
          budget.spend();
          return target.exec(query);
        };
      }
      return (...args: unknown[]) => Reflect.apply(value, target, args);
    },
  });
}

function countedNamespace(namespace: DurableObjectNamespace, budget: CallBudget): DurableObjectNamespace {
  return new Proxy(namespace, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "get") return (...args: Parameters<DurableObjectNamespace["get"]>) => countedStub(target.get(...args), budget);
      return (...args: unknown[]) => Reflect.apply(value, target, args);
    },
  });
}

function countedStub(stub: DurableObjectStub, budget: CallBudget): DurableObjectStub {
  return new Proxy(stub, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      // A stub is no promise: `then` is passed over as it is, whatever the stub answers for it.
      if (typeof value !== "function" || property === "then") return value;
      // Reflect.apply, not value.apply: an RPC method's own properties are calls to the object.
      return (...args: unknown[]) => {
        budget.spend();
        return Reflect.apply(value, target, args);
      };
    },
  });
}
