// @ts-check
import { formatDuration, h, statusBadge } from "./dom.js";

/**
 * @typedef {{ name?: string, taskReferenceName: string, type: string, subWorkflowParam?: {name?: unknown, version?: unknown}, inputParameters?: Record<string, unknown> }} WorkflowTask
 * @typedef {{ taskId: string, referenceTaskName: string, taskType: string, status: string, startTime: number, endTime: number, scheduledTime: number, subWorkflowId?: string, retried?: boolean }} Task
 * @typedef {{ definitionTask: WorkflowTask, instances: Task[] }} Step
 */

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
 * the child's own diagram nested inside it.
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
      latest ? statusBadge(status) : h("span", { className: "badge status-NOT_STARTED" }, "not started"),
      step.instances.length > 1 ? h("span", { className: "node-attempts" }, `${step.instances.length} attempts`) : null);
    const extra = [];
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
