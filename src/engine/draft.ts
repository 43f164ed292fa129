import type { TaskExecution, WorkflowExecution } from "./model";

/**
 * A copy-on-write view of an execution for one decision. Unchanged tasks keep their object
 * identity, so the actor can persist exactly the rows whose identity changed.
 */
export class Draft {
  #state: WorkflowExecution;
  #tasksCopied = false;

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
    return updated;
  }

  /** Appends a new task instance. */
  addTask(task: TaskExecution): void {
    this.#ownTasks().push(task);
  }

  /**
   * Puts a new task instance in the list just before task `beforeTaskId` (an upgrade's skipped tasks, which belong
   * before the tasks that ran after them): it takes that task's `seq`, and every task from there on moves one on.
   */
  insertTask(task: TaskExecution, beforeTaskId: string): void {
    const tasks = this.#tasksToChange(true);
    const index = tasks.findIndex((candidate) => candidate.taskId === beforeTaskId);
    if (index < 0) throw new Error(`no task ${beforeTaskId} in this execution`);
    tasks.splice(index, 0, { ...task, seq: tasks[index]!.seq });
    for (let i = index + 1; i < tasks.length; i++) tasks[i] = { ...tasks[i]!, seq: tasks[i - 1]!.seq + 1 };
  }

  /** Keeps only the tasks for which `keep` is true (restart, rerun). */
  retainTasks(keep: (task: TaskExecution) => boolean): void {
    this.#state.tasks = this.#state.tasks.filter(keep);
    if (!this.#tasksCopied) this.#tasksChanged();
  }
}
