import type { TaskExecution, WorkflowExecution } from "./model";

/**
 * How many tasks a list holds at most to be searched each time rather than indexed or walked once and kept: below it a
 * search costs less than the bookkeeping. One figure for every such choice (a copy recorded, see `copiedFrom`; the
 * lanes' kept walk; the stored-size sum), so that a list kept for one is kept for all.
 */
export const SHORT_TASK_LIST = 32;

/** Each task list a draft copied to change (see `Draft`), to the list it copied. */
const copies = new WeakMap<readonly TaskExecution[], readonly TaskExecution[]>();

/**
 * The list task list `tasks` was copied from, when a draft copied it to change it: it held the same tasks at the same
 * places then, and `tasks` has since only grown at its end or had tasks replaced by their updates (any other change
 * makes a list of its own). What was found in that list by position stays true of this one.
 */
export function copiedFrom(tasks: readonly TaskExecution[]): readonly TaskExecution[] | undefined {
  return copies.get(tasks);
}

/** How many tasks a decision looks up by searching its list before it makes an index of them by id. */
const SEARCHED_LOOKUPS = 16;

/** Where a decision stood (see `Draft.mark`). */
export interface DraftMark {
  /** How many tasks the list held: a position from there on is of a task added since. */
  readonly length: number;
  /** How many tasks the decision had added or updated: those after are the ones `touchedSince` gives. */
  readonly touched: number;
  /** How many other changes it had made: one more since, and `touchedSince` cannot tell. */
  readonly reshaped: number;
  /** The list itself: a new one since (a task moved or dropped), and `touchedSince` cannot tell either. */
  readonly tasks: readonly TaskExecution[];
}

/**
 * A copy-on-write view of an execution for one decision. Unchanged tasks keep their object
 * identity, so the actor can persist exactly the rows whose identity changed.
 */
export class Draft {
  #state: WorkflowExecution;
  #tasksCopied = false;
  /** The positions of the tasks added or updated in this decision, in order (see {@link touchedSince}). */
  readonly #touched: number[] = [];
  /** How many changes other than adding or updating a task this decision made: patches, inserts, retains. */
  #reshaped = 0;
  /** Each task's position in the list by id, once made (see {@link #positionOf}); dropped when tasks move. */
  #positions: Map<string, number> | undefined;
  /** How many tasks this decision looked up by searching the list. */
  #lookups = 0;

  constructor(state: WorkflowExecution) {
    this.#state = { ...state };
  }

  /** The execution as it stands in this decision. */
  get state(): WorkflowExecution {
    return this.#state;
  }

  /** Changes workflow-level fields. */
  patch(fields: Partial<Omit<WorkflowExecution, "tasks">>): void {
    Object.assign(this.#state, fields);
    this.#reshaped++;
  }

  /** Where the decision stands now, to ask {@link touchedSince} later. */
  mark(): DraftMark {
    return { length: this.#state.tasks.length, touched: this.#touched.length, reshaped: this.#reshaped, tasks: this.#state.tasks };
  }

  /**
   * The positions (in the task list) of the tasks added or updated since `mark`, in order; undefined when anything else
   * changed since: a workflow field, a task inserted or dropped, or a new task list made.
   */
  touchedSince(mark: DraftMark): readonly number[] | undefined {
    if (this.#reshaped !== mark.reshaped || this.#state.tasks !== mark.tasks) return undefined;
    return this.#touched.slice(mark.touched);
  }

  #ownTasks(): TaskExecution[] {
    if (!this.#tasksCopied) {
      const original = this.#state.tasks;
      this.#state.tasks = [...original];
      // What is found in a short list by position costs less to find again than to keep (see `copiedFrom`).
      if (original.length > SHORT_TASK_LIST) copies.set(this.#state.tasks, original);
      this.#tasksChanged();
    }
    return this.#state.tasks;
  }

  /** Marks this decision as one that changes the tasks: once, however many it changes (see `taskRevision`). */
  #tasksChanged(): void {
    this.#tasksCopied = true;
    this.#state.taskRevision = (this.#state.taskRevision ?? 0) + 1;
  }

  /** The task with that id, if any. */
  task(taskId: string): TaskExecution | undefined {
    const index = this.#positionOf(taskId);
    return index < 0 ? undefined : this.#state.tasks[index];
  }

  /**
   * The position of the (first) task with that id in the list, or -1. Searched for in the list by the first lookups of
   * a decision; from then on, found in an index by id, made once and kept up as tasks are added: a decision forking N
   * tasks looks each up as it changes it, and N searches of the list cost N².
   */
  #positionOf(taskId: string): number {
    const tasks = this.#state.tasks;
    if (this.#positions === undefined) {
      if (++this.#lookups <= SEARCHED_LOOKUPS) return tasks.findIndex((task) => task.taskId === taskId);
      this.#positions = new Map();
      tasks.forEach((task, index) => this.#indexTask(task, index));
    }
    return this.#positions.get(taskId) ?? -1;
  }

  /** Notes task `task` at `index` in the index by id, when there is one (the first with an id keeps its place). */
  #indexTask(task: TaskExecution, index: number): void {
    if (this.#positions !== undefined && !this.#positions.has(task.taskId)) this.#positions.set(task.taskId, index);
  }

  /**
   * A task list of this decision's own, to change: a new one when `reorders` (a change to what the lanes' walk took in
   * of the tasks: a task's step, `seq` or reference name, or its place), else the one it has. The lanes keep what they found in a list
   * by its identity (see `walks` in lanes.ts), trusting it to only grow at its end or have a task replaced by its update.
   */
  #tasksToChange(reorders: boolean): TaskExecution[] {
    const tasks = this.#ownTasks();
    if (reorders) this.#state.tasks = [...tasks];
    return this.#state.tasks;
  }

  /** Replaces a task with a changed copy and returns the copy. */
  updateTask(taskId: string, fields: Partial<TaskExecution>): TaskExecution {
    const index = this.#positionOf(taskId);
    if (index < 0) throw new Error(`no task ${taskId} in this execution`);
    const current = this.#state.tasks[index]!;
    const updated = { ...current, ...fields };
    if (updated.taskId !== current.taskId) this.#positions = undefined;
    const reorders = updated.definitionIndex !== current.definitionIndex || updated.seq !== current.seq || updated.referenceTaskName !== current.referenceTaskName;
    this.#tasksToChange(reorders)[index] = updated;
    this.#touched.push(index);
    return updated;
  }

  /** Appends a new task instance. */
  addTask(task: TaskExecution): void {
    const index = this.#ownTasks().push(task) - 1;
    this.#indexTask(task, index);
    this.#touched.push(index);
  }

  /**
   * Puts a new task instance in the list just before task `beforeTaskId` (an upgrade's skipped tasks, which belong
   * before the tasks that ran after them): it takes that task's `seq`, and every task from there on moves one on.
   */
  insertTask(task: TaskExecution, beforeTaskId: string): void {
    this.#reshaped++;
    this.#positions = undefined;
    const tasks = this.#tasksToChange(true);
    const index = tasks.findIndex((candidate) => candidate.taskId === beforeTaskId);
    if (index < 0) throw new Error(`no task ${beforeTaskId} in this execution`);
    tasks.splice(index, 0, { ...task, seq: tasks[index]!.seq });
    for (let i = index + 1; i < tasks.length; i++) tasks[i] = { ...tasks[i]!, seq: tasks[i - 1]!.seq + 1 };
  }

  /** Keeps only the tasks for which `keep` is true (restart, rerun). */
  retainTasks(keep: (task: TaskExecution) => boolean): void {
    this.#reshaped++;
    this.#positions = undefined;
    this.#state.tasks = this.#state.tasks.filter(keep);
    if (!this.#tasksCopied) this.#tasksChanged();
  }
}
