// @ts-check
import { ApiError, api, permissionsAt, errorMessage } from "../lib/api.js";
import { allSteps, attemptsOf, diagram, heldUntil, isHttpType, isLoop, stepsOf, taskTypeOf, timeline } from "../lib/diagram.js";
import { openDialog } from "../lib/dialog.js";
import { copyButton, fact, formatDuration, formatTime, h, keepingFocus, limitedInput, replaceChildren, statusBadge } from "../lib/dom.js";
import { jsonEditor, readObject } from "../lib/json-editor.js";
import { jsonBlock } from "../lib/json-view.js";

const REFRESH_MS = 2000;
const TERMINAL = new Set(["COMPLETED", "FAILED", "TIMED_OUT", "TERMINATED"]);
/** The service keeps this much of a failure reason given from outside (MAX_TASK_REASON_LENGTH in src/engine/limits.ts). */
const MAX_REASON_LENGTH = 500;

/**
 * @typedef {import("../lib/diagram.js").Task & { inputData: Record<string, unknown>, outputData: Record<string, unknown>, reasonForIncompletion: string | null,
 *   callbackUrl?: string, retryCount: number, seq: number, workflowTask?: { asyncComplete?: boolean, type?: string, name?: string },
 *   pollCount?: number, callbackAfterSeconds?: number, responseTimeoutSeconds?: number, updateTime?: number, startDelayInSeconds?: number }} Task
 * @typedef {{ workflowId: string, workflowName: string, workflowVersion: number, status: string, input: unknown, output: unknown, variables?: Record<string, unknown>, correlationId: string | null,
 *   reasonForIncompletion: string | null, parentWorkflowId: string | null, startTime: number, endTime: number, updateTime: number,
 *   rateLimitKey?: string, rateLimited?: boolean, removalTime?: number,
 *   workflowDefinition: { tasks: import("../lib/diagram.js").WorkflowTask[], failureWorkflow?: string }, tasks: Task[] }} Workflow
 * @typedef {{ log: string, taskId: string, createdTime: number }} TaskLog
 */

/**
 * A task that waits for someone outside to finish it: a waiting webhook, a waiting WAIT (one with a duration or
 * until may be ended early), HUMAN, YIELD or PULL_WORKFLOW_MESSAGES (waiting for messages), an asyncComplete HTTP (or HTTP_SYNC) or EVENT task whose request is done or event published, or a
 * SIMPLE task, queued for a worker
 * or polled by one (the service takes its result from anyone allowed to report it, as Conductor does).
 * @param {Task} task
 */
export function isCompletableByHand(task) {
  const type = taskTypeOf(task);
  if (type === "SIMPLE") return task.status === "SCHEDULED" || task.status === "IN_PROGRESS";
  if (task.status !== "IN_PROGRESS") return false;
  if (type === "WAIT_FOR_WEBHOOK" || type === "WAIT" || type === "HUMAN" || type === "YIELD" || type === "PULL_WORKFLOW_MESSAGES") return true;
  if (!isHttpType(type) && type !== "EVENT") return false;
  const nested = /** @type {Record<string, unknown> | undefined} */ (task.inputData["http_request"]);
  const flag = task.workflowTask?.asyncComplete ?? nested?.["asyncComplete"] ?? task.inputData["asyncComplete"];
  return flag === true || flag === "true";
}

/**
 * The request that completes or fails `task` by hand with the output fields typed (`fields`, merged into its output)
 * and, for a failure, `reason` ("" for none): Conductor's queue update of that task instance, which merges the fields
 * (none: `{}`) into the output on the service's side and refuses (409) a task no longer pending, with the reason as its
 * `?reason=` (docs/api.md). Never a TaskResult: its `outputData` replaces the output (Conductor's rule), so sending the
 * output as shown would store the *** the service shows for masked values (`_secrets`, `_masked`, the definition's
 * `maskedFields`), and `POST /api/tasks` once answered a task that had ended meanwhile 200 as taken (a worker's resent
 * result), so the dialog said "failed by hand" for a task a worker or a timeout had already ended.
 * @param {string} workflowId
 * @param {{ taskId: string }} task
 * @param {"COMPLETED" | "FAILED"} status
 * @param {Record<string, unknown>} fields
 * @param {string} reason
 * @returns {{ method: string, path: string, body: unknown }}
 */
export function manualResult(workflowId, task, status, fields, reason) {
  const query = reason === "" ? "" : `?reason=${encodeURIComponent(reason)}`;
  return { method: "POST", path: `/api/queue/update/${encodeURIComponent(workflowId)}/task/${encodeURIComponent(task.taskId)}/${status}${query}`, body: fields };
}

/**
 * The reference name a skip of a step's pending task names (`PUT .../skiptask/{ref}`), null when the service would
 * refuse to skip it: it is not pending, or it is a SUB_WORKFLOW (its child would run on detached) or a DO_WHILE or WHILE
 * (its loop runs: its tasks are skipped instead). The definition's name, not the instance's: a task of a loop runs as
 * `ref__<iteration>`, a name the service's skip does not know, while `ref` skips its current iteration's.
 * @param {import("../lib/diagram.js").Step} step
 * @returns {string | null}
 */
export function pendingSkipReference(step) {
  const task = step.instances.at(-1);
  if (!task || (task.status !== "SCHEDULED" && task.status !== "IN_PROGRESS")) return null;
  const type = taskTypeOf(task);
  return type === "SUB_WORKFLOW" || isLoop(type) ? null : step.definitionTask.taskReferenceName;
}

/**
 * One execution: its state, the actions its state and the user's permissions allow, a diagram of its steps, the
 * selected task's details (with manual completion), a timeline, and its input and output. Refreshes itself while
 * the workflow can still change.
 * @type {import("../app.js").View}
 */
export async function renderExecution(container, params, context, workflowId = "") {
  let selectedRef = params.get("task") ?? undefined;
  /** @type {Workflow | undefined} */
  let workflow;
  /** @type {Set<string>} */
  let permissions = new Set();

  const head = h("div", { className: "page-head" });
  const summary = h("dl", { className: "facts" });
  const actions = h("div", { className: "actions", role: "toolbar", "aria-label": "Workflow actions" });
  const diagramBox = h("section", { className: "panel diagram-panel", "aria-labelledby": "diagram-title" });
  const taskBox = h("section", { className: "panel task-panel", "aria-live": "polite", "aria-labelledby": "task-title" });
  const timelineBox = h("section", { className: "panel", "aria-labelledby": "timeline-title" });
  const ioBox = h("section", { className: "panel io" });
  replaceChildren(container, head, summary, actions, h("div", { className: "split" }, diagramBox, taskBox), timelineBox, ioBox);

  /** The task whose logs the user asked to see (read again each time its panel is drawn), and the lines last read. */
  let shownLogs = { taskId: "", lines: /** @type {TaskLog[] | undefined} */ (undefined) };

  let lastSeen = "";
  async function load() {
    const next = /** @type {Workflow} */ (await api("GET", `/api/workflow/${encodeURIComponent(workflowId)}?includeTasks=true`));
    if (!context.active()) return;
    // Asked with every refresh (answered from the look-up's cache, asked again after a while), so that a grant or a
    // revocation made while the page is open changes the actions offered.
    const held = await permissionsAt(`workflow:${next.workflowName}`);
    if (!context.active()) return;
    // Re-rendering an unchanged execution would only take the keyboard focus away from the user. A task held back
    // from polls changes nothing when its hold ends, so which tasks are still held counts as a change too.
    const seen = `${JSON.stringify(next)} ${next.tasks.filter((task) => heldUntil(task, Date.now()) !== null).map((task) => task.taskId).join(",")} ${[...held].sort().join(",")}`;
    if (seen === lastSeen) return;
    lastSeen = seen;
    workflow = next;
    permissions = held;
    keepingFocus(container, render);
  }

  /** @param {string} label @param {() => Promise<unknown>} run */
  async function act(label, run) {
    try {
      await run();
      context.notify(`${label}: done`);
    } catch (error) {
      context.notify(`${label}: ${errorMessage(error)}`, "error");
    }
    await load().catch(() => {});
  }

  function render() {
    if (!workflow) return;
    const current = workflow;
    const base = `/api/workflow/${encodeURIComponent(current.workflowId)}`;
    replaceChildren(head,
      h("h1", {}, current.workflowName, h("span", { className: "muted" }, ` v${current.workflowVersion}`), " ", statusBadge(current.status)));
    const duration = (current.endTime || Date.now()) - current.startTime;
    replaceChildren(summary,
      fact("Workflow id", h("span", { className: "mono" }, current.workflowId)),
      current.correlationId ? fact("Correlation id", current.correlationId) : null,
      current.parentWorkflowId ? fact("Parent", h("a", { href: `#/executions/${current.parentWorkflowId}` }, current.parentWorkflowId)) : null,
      fact("Started", formatTime(current.startTime)),
      current.endTime ? fact("Ended", formatTime(current.endTime)) : null,
      current.removalTime ? fact("Removed", formatTime(current.removalTime), h("span", { className: "muted" }, " — its retention ends then")) : null,
      fact("Duration", formatDuration(duration)),
      current.reasonForIncompletion ? fact("Reason", h("span", { className: "error-text" }, current.reasonForIncompletion)) : null,
      rateLimitFact(current),
      failureWorkflowFact(current));

    const admin = permissions.has("WORKFLOW_ADMIN");
    const buttons = [];
    if (admin && current.status === "RUNNING") buttons.push(button("Pause", () => act("Pause", () => api("PUT", `${base}/pause`))));
    if (admin && current.status === "PAUSED") buttons.push(button("Resume", () => act("Resume", () => api("PUT", `${base}/resume`))));
    if (admin && (current.status === "RUNNING" || current.status === "PAUSED")) {
      buttons.push(button("Upgrade…", () => void upgrade(current).catch((error) => context.notify(`Upgrade: ${errorMessage(error)}`, "error"))));
      buttons.push(button("Terminate", () => terminate(base), "danger"));
    }
    if (admin && ["FAILED", "TIMED_OUT", "TERMINATED"].includes(current.status)) {
      const retry = () => api("POST", `${base}/retry`);
      // A sub workflow's retry reaches beyond it (its parents may reopen), so it asks first; a top-level one does not.
      buttons.push(button("Retry", () => current.parentWorkflowId
        ? confirmThen("Retry", "Run the workflow again from its failed task?", retry, reopenWarning(current))
        : act("Retry", retry)));
    }
    if (admin && TERMINAL.has(current.status)) buttons.push(button("Restart", () => confirmThen("Restart", "Run the workflow again from its first task, with the same input?", () => api("POST", `${base}/restart`), reopenWarning(current))));
    replaceChildren(actions, buttons.length > 0 ? buttons : h("p", { className: "help" }, admin ? "No action fits this state." : "Your permissions allow reading this workflow only."));

    const steps = stepsOf(current.workflowDefinition.tasks, current.tasks);
    replaceChildren(diagramBox,
      h("h2", { id: "diagram-title" }, "Steps"),
      diagram(steps, {
        selectedRef,
        onSelect: (step) => {
          selectedRef = step.definitionTask.taskReferenceName;
          history.replaceState(null, "", `#/executions/${current.workflowId}?task=${encodeURIComponent(selectedRef)}`);
          render();
          taskBox.querySelector("h2")?.focus();
        },
        loadChild: async (childId) => {
          const child = /** @type {Workflow} */ (await api("GET", `/api/workflow/${encodeURIComponent(childId)}?includeTasks=true`));
          return diagram(stepsOf(child.workflowDefinition.tasks, child.tasks), {
            onSelect: (step) => context.go(`#/executions/${childId}?task=${encodeURIComponent(step.definitionTask.taskReferenceName)}`),
          });
        },
      }));
    renderTask(current, admin, allSteps(steps).find((step) => step.definitionTask.taskReferenceName === selectedRef));
    replaceChildren(timelineBox, h("h2", { id: "timeline-title" }, "Timeline"),
      current.tasks.length > 0 ? timeline(current.tasks, current.startTime, current.endTime) : h("p", { className: "empty" }, "No task has run yet."));
    // Most workflows have no variables: their block would only be an empty `{}`.
    const variables = current.variables ?? {};
    const variablesBlock = Object.keys(variables).length > 0 ? [h("div", {}, h("h2", {}, "Variables"), jsonBlock(variables, "Workflow variables"))] : [];
    replaceChildren(ioBox,
      h("div", {}, h("h2", {}, "Input"), jsonBlock(current.input, "Workflow input")),
      h("div", {}, h("h2", {}, "Output"), jsonBlock(current.output, "Workflow output")),
      ...variablesBlock);
  }

  /**
   * @param {Workflow} current @param {boolean} admin
   * @param {import("../lib/diagram.js").Step | undefined} selected the selected step, wherever it is (inside a SWITCH or FORK_JOIN branch or a DO_WHILE's loop too, nested ones included)
   */
  function renderTask(current, admin, selected) {
    if (!selectedRef || !selected) {
      replaceChildren(taskBox, h("h2", { id: "task-title", tabindex: "-1" }, "Task"), h("p", { className: "help" }, "Choose a step in the diagram to see its input, output and actions."));
      return;
    }
    const { definitionTask } = selected;
    const instances = /** @type {Task[]} */ (selected.instances);
    const task = instances.at(-1);
    // A loop's step has an instance per iteration: the latest run's attempts are those of its latest iteration.
    const attempts = /** @type {Task[]} */ (attemptsOf(selected));
    const earlierIterations = instances.slice(0, instances.length - attempts.length);
    const base = `/api/workflow/${encodeURIComponent(current.workflowId)}`;
    /** @type {HTMLElement[]} */
    const content = [h("h2", { id: "task-title", tabindex: "-1" }, selectedRef, " ", task ? statusBadge(task.status) : null)];
    // The service skips a task of a RUNNING workflow that is pending or not reached yet (docs/api.md, skiptask).
    const skippable = admin && current.status === "RUNNING";
    if (!task && selected.notTaken) {
      // Skipping it would change nothing: the workflow never reaches it.
      const why = selected.inLoop ? "This step is in a branch its SWITCH did not take in its latest iteration." : "This step is in a branch its SWITCH did not take: it does not run.";
      content.push(h("p", { className: "help" }, why), h("h3", {}, "Definition"), jsonBlock(definitionTask, "Task definition"));
      replaceChildren(taskBox, content);
      return;
    }
    // The service jumps a RUNNING or PAUSED workflow to one of its top-level tasks, a JOIN excepted (docs/api.md, jump).
    const jumpable = admin && (current.status === "RUNNING" || current.status === "PAUSED") && definitionTask.type !== "JOIN"
      && current.workflowDefinition.tasks.some((top) => top.taskReferenceName === definitionTask.taskReferenceName);
    const jumpButton = jumpable ? button("Jump here…", () => jumpTo(current, definitionTask.taskReferenceName, task !== undefined)) : null;
    if (!task) {
      const aheadActions = [skippable ? button("Skip…", () => skipTask(current, definitionTask.taskReferenceName, false)) : null, jumpButton].filter((action) => action !== null);
      const skipAhead = aheadActions.length > 0 ? h("div", { className: "actions", role: "toolbar", "aria-label": "Task actions" }, aheadActions) : null;
      content.push(h("p", { className: "help" }, "This step has not run yet."), ...(skipAhead ? [skipAhead] : []), h("h3", {}, "Definition"), jsonBlock(definitionTask, "Task definition"));
      replaceChildren(taskBox, content);
      return;
    }
    const taskActions = [];
    if (isCompletableByHand(task)) {
      // The service takes a task's result from whoever may execute it by reference name (the definition's: a loop task's
      // runs of every iteration share it) or by task name (a worker's grant).
      const scopes = [`task:${definitionTask.taskReferenceName}`, ...(task.taskDefName ? [`task:${task.taskDefName}`] : [])];
      void Promise.all(scopes.map(permissionsAt)).then((taskPermissions) => {
        if (!context.active() || !(permissions.has("TASK_EXECUTE") || taskPermissions.some((granted) => granted.has("TASK_EXECUTE")))) return;
        taskActionBox.prepend(
          button("Complete…", () => completeByHand(current, task, "COMPLETED")),
          button("Fail…", () => completeByHand(current, task, "FAILED"), "danger"));
      });
    }
    const skipReference = skippable ? pendingSkipReference(selected) : null;
    if (skipReference !== null) taskActions.push(button("Skip…", () => skipTask(current, skipReference, true)));
    if (jumpButton) taskActions.push(jumpButton);
    if (admin && TERMINAL.has(current.status)) {
      taskActions.push(button("Rerun from here", () => confirmThen("Rerun", `Run the workflow again from ${task.referenceTaskName}? Tasks before it keep their results.`, () => api("POST", `${base}/rerun`, { reRunFromTaskId: task.taskId }), reopenWarning(current))));
    }
    const taskActionBox = h("div", { className: "actions", role: "toolbar", "aria-label": "Task actions" }, taskActions);
    const simple = taskTypeOf(task) === "SIMPLE";
    const placeWait = placeNote(task);
    const waitingFor = simple ? workerNote(task, current.workflowId) : taskTypeOf(task) === "WAIT" ? waitNote(task) : placeWait;
    content.push(
      taskActionBox,
      ...(waitingFor ? [waitingFor] : []),
      h("dl", { className: "facts" },
        fact("Type", task.workflowTask?.type === "DYNAMIC" && task.taskType !== "DYNAMIC" ? `${taskTypeOf(task)} (chosen by its DYNAMIC)` : taskTypeOf(task)),
        // Task definitions (and, for SIMPLE, worker queues) go by the name, so it shows where the reference does not say it.
        task.taskDefName && task.taskDefName !== definitionTask.taskReferenceName ? fact("Task name", task.taskDefName) : null,
        fact("Task id", h("span", { className: "mono" }, task.taskId)),
        // A loop's task is named ref__<iteration> in the task list and the timeline.
        selected.inLoop ? fact("Instance", h("span", { className: "mono" }, task.referenceTaskName)) : null,
        selected.inLoop || isLoop(taskTypeOf(task)) ? fact("Iteration", String(task.iteration ?? 0)) : null,
        ...(simple ? workerFacts(task) : []),
        // An HTTP_POLL between its calls is SCHEDULED for the next one.
        taskTypeOf(task) === "HTTP_POLL" ? fact("Polls", String(task.pollCount ?? 0)) : null,
        attempts.length > 1 ? fact("Attempts", String(attempts.length)) : null,
        fact(taskTypeOf(task) === "HTTP_POLL" && task.status === "SCHEDULED" && (task.pollCount ?? 0) > 0 ? "Next call" : "Scheduled", formatTime(task.scheduledTime)),
        task.startTime ? fact("Started", formatTime(task.startTime)) : null,
        task.endTime ? fact("Ended", formatTime(task.endTime)) : null,
        task.subWorkflowId ? fact("Child", h("a", { href: `#/executions/${task.subWorkflowId}` }, task.subWorkflowId)) : null,
        task.callbackUrl ? fact("Callback URL", h("code", { className: "callback-url" }, task.callbackUrl), " ", copyButton(task.callbackUrl)) : null,
        task.reasonForIncompletion && !placeWait ? fact("Reason", h("span", { className: "error-text" }, task.reasonForIncompletion)) : null),
      h("h3", {}, "Input"), jsonBlock(task.inputData, "Task input"),
      h("h3", {}, "Output"), jsonBlock(task.outputData, "Task output"),
      ...logsSection(task));
    /** @param {Task} run @param {boolean} named with its instance's name (`ref__<iteration>`) first */
    const runItem = (run, named) => h("li", {}, named ? [h("span", { className: "mono" }, run.referenceTaskName), " "] : null,
      statusBadge(run.status), " ", h("span", { className: "mono" }, run.taskId), run.reasonForIncompletion ? ` — ${run.reasonForIncompletion}` : "");
    if (attempts.length > 1) content.push(h("h3", {}, "Earlier attempts"), h("ul", { className: "attempts" }, attempts.slice(0, -1).map((run) => runItem(run, false))));
    if (earlierIterations.length > 0) content.push(h("h3", {}, "Earlier iterations"), h("ul", { className: "attempts" }, earlierIterations.map((run) => runItem(run, true))));
    replaceChildren(taskBox, content);
  }

  /**
   * The task's log lines (GET /api/tasks/{taskId}/log), read when the user asks for them, not with every refresh.
   * @param {Task} task
   */
  function logsSection(task) {
    const box = h("div", { className: "task-logs", tabindex: "-1" });
    const show = () => {
      const focused = box.contains(document.activeElement);
      // Drawn again: the lines read before stand until the new ones come.
      const earlier = shownLogs.taskId === task.taskId ? shownLogs.lines : undefined;
      shownLogs = { taskId: task.taskId, lines: earlier };
      replaceChildren(box, earlier ? logLines(earlier) : h("p", { className: "help" }, "Reading the logs…"));
      void api("GET", `/api/tasks/${encodeURIComponent(task.taskId)}/log`).then(
        (read) => {
          if (!context.active()) return;
          const lines = /** @type {TaskLog[]} */ (read);
          if (shownLogs.taskId === task.taskId) shownLogs.lines = lines;
          replaceChildren(box, logLines(lines));
          // The button that had the focus is gone: keep it in the logs it opened.
          if (focused) box.focus();
        },
        (error) => {
          if (context.active()) replaceChildren(box, h("p", { className: "error-text" }, `The logs could not be read: ${errorMessage(error)}`));
        });
    };
    if (shownLogs.taskId === task.taskId) show();
    else replaceChildren(box, button("Show logs", show));
    return [h("h3", {}, "Logs"), box];
  }

  /** @param {Workflow} current @param {Task} task @param {"COMPLETED" | "FAILED"} status */
  function completeByHand(current, task, status) {
    const editor = jsonEditor({ id: "manual-output", label: "Output (JSON object, merged into the task's output)", value: {}, rows: 8 });
    const { input: reason, hint: reasonHint } = limitedInput({
      id: "manual-reason", name: "reason", max: MAX_REASON_LENGTH, note: `The service keeps at most ${MAX_REASON_LENGTH} characters of a reason.`,
    });
    sendFromEditor({
      title: `${status === "COMPLETED" ? "Complete" : "Fail"} ${task.referenceTaskName}`,
      body: [],
      editor,
      after: status === "FAILED" ? [h("label", { for: "manual-reason" }, "Reason"), reason, reasonHint] : [],
      confirmLabel: status === "COMPLETED" ? "Complete task" : "Fail task",
      danger: status === "FAILED",
      field: "outputData",
      send: async (output) => {
        const request = manualResult(current.workflowId, task, status, output, status === "FAILED" ? reason.value.trim() : "");
        await api(request.method, request.path, request.body);
      },
      done: `${task.referenceTaskName}: ${status === "COMPLETED" ? "completed" : "failed"} by hand`,
    });
  }

  /**
   * Skips a task through the service, with the output later tasks then read; a refusal (the task moved on
   * meanwhile, say) shows the service's message in the dialog.
   * @param {Workflow} current @param {string} ref @param {boolean} pending whether the task waits now (else it lies ahead)
   */
  function skipTask(current, ref, pending) {
    const editor = jsonEditor({ id: "skip-output", label: "Output (JSON object: the skipped task's output, which later tasks read)", value: {}, rows: 8 });
    sendFromEditor({
      title: `Skip ${ref}`,
      body: [h("p", {}, pending
        ? "The task ends SKIPPED now, with this output, and the workflow moves on. Whatever it still waits for (a request, a callback, a completion) is then refused."
        : "When the workflow reaches this task it is recorded SKIPPED, with this output, instead of running.")],
      editor,
      confirmLabel: "Skip task",
      field: "taskOutput",
      send: (taskOutput) => api("PUT", `/api/workflow/${encodeURIComponent(current.workflowId)}/skiptask/${encodeURIComponent(ref)}`, { taskOutput }),
      done: pending ? `${ref}: skipped` : `${ref}: will be skipped when reached`,
    });
  }

  /**
   * Jumps the workflow to a top-level task through the service, with the input typed (`{}`: resolved from the
   * definition); a refusal shows the service's message in the dialog.
   * @param {Workflow} current @param {string} ref @param {boolean} ran whether the task has run (a jump back) or lies ahead
   */
  function jumpTo(current, ref, ran) {
    const editor = jsonEditor({ id: "jump-input", label: "Input (JSON object; {} resolves it from the definition)", value: {}, rows: 8 });
    sendFromEditor({
      title: `Jump to ${ref}`,
      body: [h("p", {}, ran
        ? "The tasks after it are stopped and discarded, and it runs again."
        : "What runs now ends SKIPPED, and so does every task before it: the workflow goes on from this task.")],
      editor,
      confirmLabel: "Jump",
      send: (input) => api("POST", `/api/workflow/${encodeURIComponent(current.workflowId)}/jump/${encodeURIComponent(ref)}`, input),
      done: `Jumped to ${ref}`,
    });
  }

  /**
   * Moves the running workflow to another registered version of its definition (`POST …/upgrade`), with the outputs
   * of the tasks that version adds before where it stands (recorded SKIPPED); a refusal shows the service's message.
   * @param {Workflow} current
   */
  async function upgrade(current) {
    // This workflow's versions alone (name=), without their tasks (short=true): the versions are all the dialog offers.
    /** @type {Array<{ name: string, version: number }>} */
    const definitions = await api("GET", `/api/metadata/workflow?name=${encodeURIComponent(current.workflowName)}&short=true`);
    const versions = definitions.filter((definition) => definition.version !== current.workflowVersion).map((definition) => definition.version);
    if (versions.length === 0) {
      context.notify(`No other version of ${current.workflowName} is registered: register one first`, "error");
      return;
    }
    const select = h("select", { id: "upgrade-version", name: "version" }, versions.sort((a, b) => b - a).map((version) => h("option", { value: String(version) }, `version ${version}`)));
    const editor = jsonEditor({ id: "upgrade-output", label: "Outputs of the tasks it skips (JSON object: reference name → output)", value: {}, rows: 6 });
    sendFromEditor({
      title: `Upgrade ${current.workflowName}`,
      body: [
        h("p", {}, `The workflow goes on from where it stands under the version chosen; nothing runs again. Tasks that version adds before that point are recorded SKIPPED. It runs version ${current.workflowVersion} now.`),
        h("label", { for: "upgrade-version" }, "Version"), select],
      editor,
      confirmLabel: "Upgrade",
      field: "taskOutput",
      send: (taskOutput) => api("POST", `/api/workflow/${encodeURIComponent(current.workflowId)}/upgrade`, { name: current.workflowName, version: Number(select.value), taskOutput }),
      // The version chosen once sent, not the one shown when the dialog opens.
      done: () => `Upgraded to version ${select.value}`,
    });
  }

  /**
   * A dialog that sends the JSON object typed in `editor` (after `body`, before `after`) through `send`, marking the
   * service's validation errors at their lines (`field`: the body field the editor fills, stripped from their paths);
   * once sent it says `done` (or what it gives then) and shows the execution again, and a refusal stays in the dialog with the service's message.
   * @param {{ title: string, body: Array<Node | string>, editor: ReturnType<typeof jsonEditor>, after?: Array<Node | string>, confirmLabel: string,
   *   danger?: boolean, field?: string, send: (value: Record<string, unknown>) => Promise<unknown>, done: string | (() => string) }} options
   */
  function sendFromEditor({ title, body, editor, after = [], confirmLabel, danger = false, field, send, done }) {
    void openDialog({
      title,
      body: [...body, editor.element, ...after],
      confirmLabel,
      danger,
      onConfirm: async () => {
        const value = readObject(editor);
        try {
          await send(value);
        } catch (error) {
          if (error instanceof ApiError && error.validationErrors.length > 0) {
            editor.showErrors(error.validationErrors.map((issue) => (field === undefined ? issue : { ...issue, path: issue.path.replace(new RegExp(`^${field}\\.?`), "") })));
          }
          throw error;
        }
      },
    }).then(async (sent) => {
      if (!sent) return;
      context.notify(typeof done === "function" ? done() : done);
      await load().catch(() => {});
    });
  }

  /** @param {string} base */
  function terminate(base) {
    const reason = h("input", { id: "terminate-reason", name: "reason", value: "Terminated from the UI" });
    const failureWorkflow = workflow?.workflowDefinition.failureWorkflow;
    // A termination starts the failure workflow only when asked to (Orkes' triggerFailureWorkflow).
    const trigger = h("input", { type: "checkbox", id: "terminate-trigger" });
    const triggerRow = failureWorkflow ? h("p", {}, trigger, " ", h("label", { for: "terminate-trigger" }, `Start its failure workflow (${failureWorkflow})`)) : null;
    void openDialog({
      title: "Terminate workflow",
      body: [h("p", {}, "Running tasks are canceled and child workflows terminated."), h("label", { for: "terminate-reason" }, "Reason"), reason, ...(triggerRow ? [triggerRow] : [])],
      confirmLabel: "Terminate",
      danger: true,
      onConfirm: async () => {
        const query = `?reason=${encodeURIComponent(reason.value)}${trigger.checked ? "&triggerFailureWorkflow=true" : ""}`;
        await api("DELETE", `${base}${query}`);
      },
    }).then(async (done) => {
      if (done) context.notify("Terminated");
      await load().catch(() => {});
    });
  }

  /** @param {string} label @param {string} question @param {() => Promise<unknown>} run @param {Node[]} [notes] shown under the question */
  function confirmThen(label, question, run, notes = []) {
    void openDialog({ title: label, body: [h("p", {}, question), ...notes], confirmLabel: label, onConfirm: async () => void (await run()) }).then(async (done) => {
      if (done) context.notify(`${label}: done`);
      await load().catch(() => {});
    });
  }

  await load();
  const timer = window.setInterval(() => {
    if (!context.active()) {
      window.clearInterval(timer);
      return;
    }
    if (document.visibilityState !== "visible" || document.querySelector("dialog[open]")) return;
    const settled = workflow !== undefined && TERMINAL.has(workflow.status);
    // A settled execution is not read again, but its actions (Restart, Rerun, Retry…) still follow a grant or a
    // revocation made while the page is open: the permissions are looked at (from the look-up's cache, asked again after
    // a while), and only a change in them reads the execution again and draws the page.
    const refreshing = settled ? permissionsChanged().then((changed) => (changed ? load() : undefined)) : load();
    refreshing.catch((error) => context.notify(errorMessage(error), "error"));
  }, REFRESH_MS);

  /** Whether the caller's permissions on this workflow differ from those the page was drawn with. */
  async function permissionsChanged() {
    if (workflow === undefined) return false;
    const held = await permissionsAt(`workflow:${workflow.workflowName}`);
    return [...held].sort().join(",") !== [...permissions].sort().join(",");
  }
}

/**
 * The warning a sub workflow's Retry, Restart and Rerun give before they act: the service then reopens its
 * parents up the tree (docs/api.md, "reopens its parents"), unless a rule there keeps one as it is, hence "may".
 * Empty for a workflow without a parent.
 * @param {Workflow} current
 * @returns {Node[]}
 */
function reopenWarning(current) {
  const parentId = current.parentWorkflowId;
  if (!parentId) return [];
  // Following the link leaves the page, so it closes the dialog instead of leaving it open over the parent.
  const closeDialog = (/** @type {MouseEvent} */ event) => (/** @type {HTMLElement} */ (event.currentTarget)).closest("dialog")?.close("cancel");
  return [h("p", { className: "warning reopen-warning" },
    "This is a sub workflow: running it again may also reopen its parent workflow ",
    h("a", { href: `#/executions/${parentId}`, className: "mono", onclick: closeDialog }, parentId),
    " and that one's parents, up the tree. A reopened parent waits for this workflow again and runs the tasks after it again.")];
}

/** What the service writes in a failed execution's output about its failure workflow (Conductor's key). */
const FAILURE_WORKFLOW_KEY = "conductor.failure_workflow";
const EXECUTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The rate limit an execution counts against (its definition's `rateLimitConfig`): its key, and whether it still waits
 * for a place (nothing runs until then). None for an execution without one.
 * @param {Workflow} workflow
 */
function rateLimitFact(workflow) {
  if (workflow.rateLimitKey === undefined) return null;
  const waiting = workflow.rateLimited === true;
  return fact("Rate limit", h("span", { className: "mono" }, workflow.rateLimitKey), waiting ? h("span", { className: "muted" }, " — waiting for a place") : null);
}

/**
 * The failure workflow an ended execution started (a link), or why it could not start; null when there is none.
 * @param {Workflow} workflow
 */
function failureWorkflowFact(workflow) {
  const output = workflow.output;
  const value = output !== null && typeof output === "object" ? /** @type {Record<string, unknown>} */ (output)[FAILURE_WORKFLOW_KEY] : undefined;
  if (typeof value !== "string") return null;
  if (EXECUTION_ID.test(value)) return fact("Failure workflow", h("a", { href: `#/executions/${value}`, className: "mono" }, value));
  return fact("Failure workflow", h("span", { className: "error-text" }, value));
}

/**
 * What a pending SIMPLE task waits for, said plainly: a worker's poll of its queue (and where a worker polls), after
 * the end of its hold when it is held back from polls, or the result of the worker that took it. Not "stuck": nothing
 * runs it but a worker. Null once it ended.
 * @param {Task} task
 * @param {string} workflowId its execution's (resetcallbacks ends a hold)
 */
function workerNote(task, workflowId) {
  const text = workerNoteText(task, workflowId);
  return text ? h("p", { className: "help worker-note" }, text) : null;
}

/**
 * What an HTTP (HTTP_SYNC) or HTTP_POLL task held back by its task definition's concurrentExecLimit or rateLimitPerFrequency waits
 * for (the service says so in its reasonForIncompletion while it is SCHEDULED): not an error, so a note rather than a
 * reason. Only that reason: an HTTP_POLL is SCHEDULED between its calls too.
 * @param {Task} task
 */
function placeNote(task) {
  const placed = isHttpType(taskTypeOf(task)) || taskTypeOf(task) === "HTTP_POLL";
  if (!placed || task.status !== "SCHEDULED" || !task.reasonForIncompletion?.startsWith("Waiting for a place under the limits")) return null;
  return h("p", { className: "help" }, `${task.reasonForIncompletion}: it runs once another task of that name ends (or its window has room), `
    + "in the order they asked. Raising, removing or deleting the registered limits lets it run at once (not a task's own taskDefinition's).");
}

/**
 * What a waiting WAIT task waits for, from its resolved input: its time (then it completes by itself), or a hand.
 * @param {Task} task
 */
function waitNote(task) {
  if (task.status !== "IN_PROGRESS") return null;
  const { duration, until } = task.inputData;
  const early = " It can be completed or failed by hand before then.";
  const text = typeof duration === "string"
    ? `Waiting ${duration} from its start (${formatTime(task.startTime)}), then it completes by itself.${early}`
    : typeof until === "string"
      ? `Waiting until ${until}, then it completes by itself.${early}`
      : "Waiting to be completed or failed by hand (or through POST /api/tasks).";
  return h("p", { className: "help" }, text);
}

/** @param {Task} task @param {string} workflowId */
function workerNoteText(task, workflowId) {
  const name = task.taskDefName ?? task.taskType;
  if (task.status === "SCHEDULED") {
    const where = task.domain ? ` in domain ${task.domain}` : "";
    const query = task.domain ? `?domain=${encodeURIComponent(task.domain)}` : "";
    const poll = `a worker to poll ${name}${where} (GET /api/tasks/poll/${encodeURIComponent(name)}${query}).`;
    const until = heldUntil(task, Date.now());
    if (until === null) return `Waiting for ${poll}`;
    // Workers polling meanwhile get nothing: the note says so, and how to end the hold, rather than "waiting for a worker".
    const cause = (task.pollCount ?? 0) > 0 ? "a worker's update asked to have it back then; "
      : task.retryCount > 0 ? "its retry delay; "
        : (task.startDelayInSeconds ?? 0) > 0 ? "its startDelay; " : "";
    const seconds = task.callbackAfterSeconds ?? 0;
    return `Held back from polls until ${formatTime(until)}, ${formatDuration(seconds * 1000)} after its last update (${cause}callbackAfterSeconds ${seconds}). `
      + `POST /api/workflow/${encodeURIComponent(workflowId)}/resetcallbacks releases it at once. Then waiting for ${poll}`;
  }
  if (task.status !== "IN_PROGRESS") return "";
  const within = task.responseTimeoutSeconds === 0 ? "" : ` within ${formatSeconds(task.responseTimeoutSeconds)}`;
  // Set on an IN_PROGRESS task only in an execution stored before a worker's IN_PROGRESS update put its task back SCHEDULED (such a
  // task stayed IN_PROGRESS while it waited in its queue); the next poll resets it to 0.
  const requeued = (task.callbackAfterSeconds ?? 0) > 0 ? ` Its last update kept it in progress, to be polled again after ${formatSeconds(task.callbackAfterSeconds)}.` : "";
  return `Polled by worker ${task.workerId ?? "(unnamed)"}, which reports its result with POST /api/tasks${within}.${requeued}`;
}

/**
 * A SIMPLE task's worker facts, as Conductor's Task JSON has them.
 * @param {Task} task
 */
function workerFacts(task) {
  return [
    fact("Worker", task.workerId ?? "none yet"),
    fact("Poll count", String(task.pollCount ?? 0)),
    fact("Callback after", formatSeconds(task.callbackAfterSeconds ?? 0)),
    fact("Response timeout", task.responseTimeoutSeconds === 0 ? "none" : formatSeconds(task.responseTimeoutSeconds)),
    task.domain ? fact("Domain", task.domain) : null,
  ];
}

/** A task's log lines, oldest first, each with its time. @param {TaskLog[]} lines */
function logLines(lines) {
  if (lines.length === 0) return h("p", { className: "help" }, "No log lines: a worker adds them with its result (its logs) or POST /api/tasks/{taskId}/log.");
  return h("ol", { className: "task-log" }, lines.map((line) => h("li", {}, h("span", { className: "muted" }, formatTime(line.createdTime)), h("pre", {}, line.log))));
}

/** @param {number | undefined} seconds */
function formatSeconds(seconds) {
  return `${seconds ?? 0} s`;
}


/** @param {string} label @param {() => unknown} onclick @param {string} [className] */
function button(label, onclick, className = "") {
  return h("button", { type: "button", className, onclick }, label);
}

