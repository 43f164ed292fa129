import type { TaskExecution, WorkflowExecution } from "./model";

/** Where a decision stood (see `Draft.mark`). */
export interface DraftMark {
  /** How many tasks the list held: a position from there on is of a task added since. */
  readonly length: number;
  readonly touched: number;
  readonly reshaped: number;
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
      this.#state.tasks = [...this.#state.tasks];
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
    return this.#state.tasks.find((task) => task.taskId === taskId);
  }

  /**
   * A task list of this decision's own, to change: a new one when `reorders` (a change to what the lanes' walk took in
   * of the tasks: a task's step or `seq`, or its place), else the one it has. The lanes keep what they found in a list
   * by its identity (see `walks` in lanes.ts), trusting it to only grow at its end or have a task replaced by its update.
   */
  #tasksToChange(reorders: boolean): TaskExecution[] {
    const tasks = this.#ownTasks();
    if (reorders) this.#state.tasks = [...tasks];
    return this.#state.tasks;
  }

  /** Replaces a task with a changed copy and returns the copy. */
  updateTask(taskId: string, fields: Partial<TaskExecution>): TaskExecution {
    const index = this.#state.tasks.findIndex((task) => task.taskId === taskId);
    if (index < 0) throw new Error(`no task ${taskId} in this execution`);
    const current = this.#state.tasks[index]!;
    const updated = { ...current, ...fields };
    this.#tasksToChange(updated.definitionIndex !== current.definitionIndex || updated.seq !== current.seq)[index] = updated;
    this.#touched.push(index);
    return updated;
  }

  /** Appends a new task instance. */
  addTask(task: TaskExecution): void {
    this.#touched.push(this.#ownTasks().push(task) - 1);
  }

  /**
   * Puts a new task instance in the list just before task `beforeTaskId` (an upgrade's skipped tasks, which belong
   * before the tasks that ran after them): it takes that task's `seq`, and every task from there on moves one on.
   */
  insertTask(task: TaskExecution, beforeTaskId: string): void {
    this.#reshaped++;
    const tasks = this.#tasksToChange(true);
    const index = tasks.findIndex((candidate) => candidate.taskId === beforeTaskId);
    if (index < 0) throw new Error(`no task ${beforeTaskId} in this execution`);
    tasks.splice(index, 0, { ...task, seq: tasks[index]!.seq });
    for (let i = index + 1; i < tasks.length; i++) tasks[i] = { ...tasks[i]!, seq: tasks[i - 1]!.seq + 1 };
  }

  /** Keeps only the tasks for which `keep` is true (restart, rerun). */
  retainTasks(keep: (task: TaskExecution) => boolean): void {
    this.#reshaped++;
    this.#state.tasks = this.#state.tasks.filter(keep);
    if (!this.#tasksCopied) this.#tasksChanged();
  }
}
