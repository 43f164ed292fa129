// @ts-check
import { formatDuration, h, statusBadge } from "./dom.js";

/**
 * @typedef {{ name?: string, taskReferenceName: string, type: string, subWorkflowParam?: {name?: unknown, version?: unknown}, inputParameters?: Record<string, unknown> }} WorkflowTask
 * @typedef {{ taskId: string, referenceTaskName: string, taskType: string, taskDefName?: string, status: string, startTime: number, endTime: number, scheduledTime: number,
 *   subWorkflowId?: string, retried?: boolean, workflowTask?: { type?: string, name?: string }, workerId?: string, domain?: string }} Task
 * @typedef {{ definitionTask: WorkflowTask, instances: Task[] }} Step
 */

/**
 * A task's type as its definition gives it. Not `taskType`: as in Conductor, a SIMPLE (worker) task's `taskType` is
 * its task name, the queue workers poll.
 * @param {Task} task
 */
export function taskTypeOf(task) {
  return task.workflowTask?.type ?? task.taskType;
}

/**
 * What a SIMPLE step's latest instance waits for, in a few words: a poll, or the worker that took it; null otherwise.
 * @param {WorkflowTask} definitionTask
 * @param {Task | undefined} latest
 */
function workerNote(definitionTask, latest) {
  if (definitionTask.type !== "SIMPLE" || !latest) return null;
  if (latest.status === "SCHEDULED") return `waiting for a worker to poll ${latest.taskDefName ?? definitionTask.name ?? definitionTask.taskReferenceName}`;
  if (latest.status === "IN_PROGRESS" && latest.workerId) return `polled by ${latest.workerId}`;
  return null;
}

/** How many variable names a SET_VARIABLE step lists before it says how many more there are. */
const NAMES_SHOWN = 3;

/**
 * What a system task's step does, in a few words, from its definition: how long or until when a WAIT waits (or that
 * it waits to be completed by hand), which variables a SET_VARIABLE sets, how a TERMINATE ends the workflow; null
 * for other types.
 * @param {WorkflowTask} definitionTask
 * @returns {string | null}
 */
export function systemTaskNote(definitionTask) {
  const input = definitionTask.inputParameters ?? {};
  switch (definitionTask.type) {
    case "WAIT":
      if (typeof input["duration"] === "string") return `waits ${input["duration"]}`;
      if (typeof input["until"] === "string") return `waits until ${input["until"]}`;
      return "waits to be completed by hand";
    case "SET_VARIABLE": {
      const names = Object.keys(input);
      if (names.length === 0) return "sets no variable";
      const more = names.length - NAMES_SHOWN;
      return more > 0 ? `sets ${names.slice(0, NAMES_SHOWN).join(", ")} and ${more} more` : `sets ${names.join(", ")}`;
    }
    case "TERMINATE":
      return typeof input["terminationStatus"] === "string" ? `ends the workflow ${input["terminationStatus"]}` : "ends the workflow";
    default:
      return null;
  }
}

/**
 * The workflow's steps in definition order, each with its task instances (retries are further instances).
 * @param {WorkflowTask[]} definitionTasks
 * @param {Task[]} [tasks]
 * @returns {Step[]}
 */
export function stepsOf(definitionTasks, tasks = []) {
  return definitionTasks.map((definitionTask) => ({
    definitionTask,
    instances: tasks.filter((task) => task.referenceTaskName === definitionTask.taskReferenceName),
  }));
}

/**
 * @typedef {object} DiagramOptions
 * @property {(step: Step) => void} [onSelect] called when a step is chosen (click or keyboard)
 * @property {string} [selectedRef] the reference name shown as selected
 * @property {(subWorkflowId: string) => Promise<HTMLElement>} [loadChild] renders a child execution nested in its step
 */

/**
 * A diagram of a workflow: start, each step in sequence (coloured by the status of its latest instance), end.
 * Steps are buttons, so the diagram is usable by keyboard; a SUB_WORKFLOW step links to its child and can show
 * the child's own diagram nested inside it; a SIMPLE step says whether it waits for a worker's poll or which worker
 * took it, and a system step (WAIT, SET_VARIABLE, TERMINATE) what it does.
 * @param {Step[]} steps
 * @param {DiagramOptions} [options]
 */
export function diagram(steps, options = {}) {
  const nodes = steps.map((step) => {
    const latest = step.instances.at(-1);
    const status = latest?.status ?? "NOT_STARTED";
    const { definitionTask } = step;
    const childId = latest?.subWorkflowId;
    const selected = options.selectedRef === definitionTask.taskReferenceName;
    const body = h("button", {
      type: "button",
      className: `node-body status-border-${status}`,
      "aria-pressed": selected ? "true" : "false",
      "data-ref": definitionTask.taskReferenceName,
      "data-status": status,
      onclick: () => options.onSelect?.(step),
    },
      h("span", { className: "node-ref" }, definitionTask.taskReferenceName),
      h("span", { className: "node-type" }, definitionTask.type),
      // A worker polls by the task name, so a step whose name is not its reference shows it.
      definitionTask.name && definitionTask.name !== definitionTask.taskReferenceName ? h("span", { className: "node-name" }, definitionTask.name) : null,
      latest ? statusBadge(status) : h("span", { className: "badge status-NOT_STARTED" }, "not started"),
      step.instances.length > 1 ? h("span", { className: "node-attempts" }, `${step.instances.length} attempts`) : null);
    const extra = [];
    const waitingFor = workerNote(definitionTask, latest) ?? systemTaskNote(definitionTask);
    if (waitingFor) extra.push(h("span", { className: "node-note" }, waitingFor));
    if (definitionTask.type === "SUB_WORKFLOW") {
      const childName = definitionTask.subWorkflowParam?.name ?? definitionTask.inputParameters?.["subWorkflowParam"];
      if (childId) {
        extra.push(h("a", { href: `#/executions/${childId}`, className: "node-link" }, "open child execution"));
        if (options.loadChild) extra.push(nestedChild(childId, options.loadChild));
      } else if (typeof childName === "string") {
        extra.push(h("span", { className: "node-note" }, `runs ${childName}`));
      }
    }
    return h("li", { className: `node${selected ? " selected" : ""}` }, body, extra);
  });
  return h("ol", { className: "diagram", "aria-label": "Workflow diagram" },
    h("li", { className: "terminal" }, "start"),
    nodes,
    h("li", { className: "terminal" }, "end"));
}

/**
 * A disclosure that loads and shows a child execution's diagram inside its SUB_WORKFLOW step.
 * @param {string} childId
 * @param {(subWorkflowId: string) => Promise<HTMLElement>} loadChild
 */
function nestedChild(childId, loadChild) {
  const details = h("details", { className: "nested" }, h("summary", {}, "show child steps"));
  let loaded = false;
  details.addEventListener("toggle", () => {
    if (!details.open || loaded) return;
    loaded = true;
    loadChild(childId).then(
      (element) => details.append(element),
      (error) => details.append(h("p", { className: "error" }, String(error instanceof Error ? error.message : error))),
    );
  });
  return details;
}

/**
 * A timeline: one bar per task instance, placed by start and end time relative to the workflow's span.
 * @param {Task[]} tasks
 * @param {number} workflowStart
 * @param {number} workflowEnd 0 while running (now is used)
 */
export function timeline(tasks, workflowStart, workflowEnd) {
  const end = workflowEnd || Date.now();
  const span = Math.max(1, end - workflowStart);
  const rows = tasks.map((task) => {
    const start = task.startTime || task.scheduledTime || workflowStart;
    const finish = task.endTime || end;
    const bar = h("span", { className: `bar status-bg-${task.status}`, title: `${task.status}` });
    // CSSOM, not a style attribute: allowed by the page's Content-Security-Policy.
    bar.style.marginLeft = `${(((start - workflowStart) / span) * 100).toFixed(2)}%`;
    bar.style.width = `${Math.max(0.5, ((finish - start) / span) * 100).toFixed(2)}%`;
    return h("li", { className: "timeline-row" },
      h("span", { className: "timeline-label" }, task.referenceTaskName),
      h("span", { className: "timeline-track" }, bar),
      h("span", { className: "timeline-duration" }, `${formatDuration(finish - start)}${task.endTime ? "" : "…"}`));
  });
  return h("ol", { className: "timeline", "aria-label": "Task durations" }, rows);
}
