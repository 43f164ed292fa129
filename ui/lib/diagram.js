// @ts-check
import { errorMessage } from "./api.js";
import { formatDuration, formatTime, h, statusBadge } from "./dom.js";

/**
 * @typedef {{ name?: string, taskReferenceName: string, type: string, subWorkflowParam?: {name?: unknown, version?: unknown}, inputParameters?: Record<string, unknown>,
 *   evaluatorType?: string, expression?: string, caseValueParam?: string, caseExpression?: string, decisionCases?: Record<string, WorkflowTask[]>, defaultCase?: WorkflowTask[],
 *   forkTasks?: WorkflowTask[][], conditionalBranches?: ConditionalBranch[], joinOn?: string[], defaultExclusiveJoinTask?: string[], loopCondition?: string, loopOver?: WorkflowTask[], dynamicForkTasksParam?: string, dynamicForkJoinTasksParam?: string, dynamicTaskNameParam?: string, sink?: string,
 *   joinsForked?: true, joinsChosen?: true }} WorkflowTask
 *   A JOIN after a FORK_JOIN_DYNAMIC waits for the tasks the fork forked: its step's `joinOn` names them once the fork
 *   ran, and is absent before (`joinsForked` marks such a JOIN). A JOIN after a CONDITIONAL_FORK waits for the last
 *   task of each branch the fork chose: its step's `joinOn` names them once the JOIN is scheduled (its input's), and
 *   is absent before (`joinsChosen` marks such a JOIN).
 * @typedef {{ condition?: { evaluatorType?: string, expression?: string } | null, tasks?: WorkflowTask[] }} ConditionalBranch
 *   A CONDITIONAL_FORK's branch: it runs when its condition holds for the fork's input, always without one.
 * @typedef {{ taskId: string, referenceTaskName: string, taskType: string, taskDefName?: string, status: string, startTime: number, endTime: number, scheduledTime: number,
 *   subWorkflowId?: string, retried?: boolean, workflowTask?: { type?: string, name?: string, taskReferenceName?: string }, workerId?: string, domain?: string, inputData?: Record<string, unknown>,
 *   outputData?: Record<string, unknown>, iteration?: number, loopOverTask?: boolean, workflowInstanceId?: string, callbackAfterSeconds?: number, updateTime?: number }} Task
 *   `iteration`: a DO_WHILE's current (or last) iteration; a task of its loop's, the iteration it ran in, its
 *   `referenceTaskName` then the definition's with `__<iteration>` appended, and `loopOverTask` true (as in Conductor).
 * @typedef {{ definitionTask: WorkflowTask, instances: Task[], branches?: Branch[], forkBranches?: ForkBranch[], loop?: Loop, inLoop?: true, notTaken?: boolean,
 *   waitingOn?: string[] }} Step
 *   `branches`: a SWITCH's, cases in the order written, then the default; `forkBranches`: a FORK_JOIN's, in the
 *   order written (a FORK_JOIN_DYNAMIC's: the tasks its latest run forked, in order; none before it ran); `loop`: a DO_WHILE's; `inLoop`: the step is one of a DO_WHILE's loop (a SWITCH branch in it
 *   included), its instances those of every iteration, in the order they ran; `notTaken`: the step lies in a branch
 *   its SWITCH did not take (or inside such a branch, a fork's or loop's included), so it will not run (in a loop:
 *   the branch its SWITCH did not take in its latest iteration); `waitingOn`: for a waiting JOIN, the tasks of its `joinOn` that
 *   have not ended well yet.
 * @typedef {{ caseValue: string | null, taken: boolean | null, steps: Step[] }} Branch
 *   `caseValue` null for the defaultCase; `taken` null while the SWITCH has not decided.
 * @typedef {{ steps: Step[], notTaken: boolean, label?: string }} ForkBranch
 *   Every branch of a fork runs; `notTaken` when the fork itself lies in a SWITCH branch not taken, or (a
 *   CONDITIONAL_FORK's) when its fork did not choose it. `label`: what it is called (`branch <n>` without one).
 * @typedef {{ steps: Step[], notTaken: boolean }} Loop
 *   The steps of a DO_WHILE's `loopOver`, run in each iteration; `notTaken` when the DO_WHILE lies in a SWITCH branch
 *   not taken.
 */

/** The system task types a DYNAMIC can run as (src/engine/tasks/dynamic): any other name it chooses is a worker's task. */
const DYNAMIC_SYSTEM_TYPES = new Set(["HTTP", "HTTP_SYNC", "HTTP_POLL", "SUB_WORKFLOW", "WAIT_FOR_WEBHOOK", "WAIT", "SET_VARIABLE", "SET_CORRELATION_ID", "TERMINATE", "INLINE", "LAMBDA", "JSON_JQ_TRANSFORM", "HUMAN", "START_WORKFLOW", "NOOP", "YIELD", "EVENT", "UPDATE_TASK", "TERMINATE_WORKFLOW", "GET_SIGNED_JWT", "PULL_WORKFLOW_MESSAGES"]);

/**
 * A task's type as its definition gives it. Not `taskType`: as in Conductor, a SIMPLE (worker) task's `taskType` is
 * its task name, the queue workers poll. A DYNAMIC's task is of the type it chose to run as: a system task's
 * `taskType` is its type, a worker's its name (one that failed to choose stays a DYNAMIC).
 * @param {Task} task
 */
export function taskTypeOf(task) {
  const type = task.workflowTask?.type ?? task.taskType;
  if (type !== "DYNAMIC" || task.taskType === "DYNAMIC") return type;
  return DYNAMIC_SYSTEM_TYPES.has(task.taskType) ? task.taskType : "SIMPLE";
}

/**
 * What a DYNAMIC step runs: the task its latest instance chose, or else the input parameter that will name it; null for
 * other steps.
 * @param {WorkflowTask} definitionTask
 * @param {Task | undefined} latest
 */
function dynamicNote(definitionTask, latest) {
  if (definitionTask.type !== "DYNAMIC") return null;
  if (latest && latest.taskType !== "DYNAMIC") return `runs ${latest.taskDefName ?? latest.taskType}`;
  return `runs the task input ${definitionTask.dynamicTaskNameParam ?? "?"} names`;
}

/**
 * When a SCHEDULED SIMPLE task's hold ends, if it is still held back from polls at `now`: the service queues it to be
 * polled only `callbackAfterSeconds` after its `updateTime` (a startDelay, a retry's delay, a worker's update that asked
 * to have it back later; docs/api.md, "Task workers"). Null for any other task, or once that time has passed.
 * @param {Task} task
 * @param {number} now epoch milliseconds
 * @returns {number | null}
 */
export function heldUntil(task, now) {
  const seconds = task.callbackAfterSeconds ?? 0;
  if (task.status !== "SCHEDULED" || seconds <= 0 || !task.updateTime || taskTypeOf(task) !== "SIMPLE") return null;
  const until = task.updateTime + seconds * 1000;
  return until > now ? until : null;
}

/**
 * What a SIMPLE step's latest instance waits for, in a few words: the end of its hold, a poll, or the worker that took
 * it; null otherwise.
 * @param {WorkflowTask} definitionTask
 * @param {Task | undefined} latest
 */
function workerNote(definitionTask, latest) {
  if (definitionTask.type !== "SIMPLE" || !latest) return null;
  const until = heldUntil(latest, Date.now());
  // Workers polling meanwhile get nothing: not "waiting for a worker" (the task's panel says why and how to release it).
  if (until !== null) return `held back from polls until ${formatTime(until)}`;
  if (latest.status === "SCHEDULED") return `waiting for a worker to poll ${latest.taskDefName ?? definitionTask.name ?? definitionTask.taskReferenceName}`;
  if (latest.status === "IN_PROGRESS" && latest.workerId) return `polled by ${latest.workerId}`;
  return null;
}

/** How many variable names a SET_VARIABLE step lists before it says how many more there are. */
const NAMES_SHOWN = 3;

/** How many characters of an INLINE script (or a DO_WHILE's condition, a JSON_JQ_TRANSFORM's filter) its step shows (on one line) before an ellipsis. */
const SCRIPT_SHOWN = 60;

/**
 * A script on one line, cut after {@link SCRIPT_SHOWN} characters.
 * @param {string} script
 */
function scriptLine(script) {
  const line = script.replace(/\s+/g, " ").trim();
  return line.length > SCRIPT_SHOWN ? `${line.slice(0, SCRIPT_SHOWN)}…` : line;
}

/**
 * What a system task's step does, in a few words, from its definition: how long or until when a WAIT waits (or that
 * it waits to be completed by hand), which variables a SET_VARIABLE sets, how a TERMINATE ends the workflow, what an
 * INLINE computes, which jq filter a JSON_JQ_TRANSFORM runs, how often a DO_WHILE repeats its loop, that a HUMAN
 * waits for a person (and what for, from Orkes' displayName), how often an HTTP_POLL calls and until what; null for
 * other types.
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
    case "INLINE": {
      const expression = typeof input["expression"] === "string" ? input["expression"] : "";
      if (input["evaluatorType"] === "value-param") return `takes input ${expression.replace(/\s+/g, " ").trim()}`;
      return `computes ${scriptLine(expression)}`;
    }
    case "LAMBDA":
      return `computes ${scriptLine(typeof input["scriptExpression"] === "string" ? input["scriptExpression"] : "")}`;
    case "JSON_JQ_TRANSFORM":
      return `transforms with jq ${scriptLine(typeof input["queryExpression"] === "string" ? input["queryExpression"] : "")}`;
    case "DO_WHILE":
    case "WHILE":
      return repeats(definitionTask);
    case "HUMAN": {
      const settings = input["__humanTaskDefinition"];
      const shown = settings !== null && typeof settings === "object" ? /** @type {Record<string, unknown>} */ (settings)["displayName"] : undefined;
      return typeof shown === "string" && shown.trim() !== "" ? `waits for a person: ${scriptLine(shown)}` : "waits for a person";
    }
    case "FORK_JOIN": {
      const count = definitionTask.forkTasks?.length ?? 0;
      return count === 1 ? "runs 1 branch" : `runs ${count} branches in parallel`;
    }
    case "CONDITIONAL_FORK": {
      const count = definitionTask.conditionalBranches?.length ?? 0;
      const otherwise = (definitionTask.defaultCase ?? []).length > 0 ? ", else its default branch" : "";
      return `runs each of its ${count === 1 ? "1 branch" : `${count} branches`} whose condition holds, in parallel${otherwise}`;
    }
    case "FORK_JOIN_DYNAMIC": {
      if (typeof definitionTask.dynamicForkTasksParam === "string") return `forks each task of input ${definitionTask.dynamicForkTasksParam}, in parallel`;
      // Conductor's older form: the input holds {dynamicTasks: [...]}.
      if (typeof definitionTask.dynamicForkJoinTasksParam === "string") return `forks each task of input ${definitionTask.dynamicForkJoinTasksParam}.dynamicTasks, in parallel`;
      const entries = input["forkTaskInputs"];
      return `forks a task for each entry of ${scriptLine(typeof entries === "string" ? entries : JSON.stringify(entries ?? []))}, in parallel`;
    }
    case "START_WORKFLOW": {
      const request = input["startWorkflow"];
      const name = request !== null && typeof request === "object" ? /** @type {Record<string, unknown>} */ (request)["name"] : undefined;
      return typeof name === "string" ? `starts ${name} on its own` : "starts a workflow on its own";
    }
    case "UPDATE_TASK": {
      const status = typeof input["taskStatus"] === "string" ? input["taskStatus"] : "a status";
      const which = typeof input["taskId"] === "string" ? `task ${scriptLine(input["taskId"])}` : typeof input["taskRefName"] === "string" ? `task ${scriptLine(input["taskRefName"])}` : "a task";
      const where = typeof input["taskId"] !== "string" && typeof input["workflowId"] === "string" ? ` of ${scriptLine(input["workflowId"])}` : "";
      return `sets ${which}${where} to ${status}`;
    }
    case "TERMINATE_WORKFLOW": {
      const ids = input["workflowId"];
      if (!Array.isArray(ids)) return typeof ids === "string" ? `terminates the workflows ${scriptLine(ids)} names` : "terminates workflows";
      return ids.length === 1 ? `terminates workflow ${scriptLine(String(ids[0]))}` : `terminates ${ids.length} workflows`;
    }
    case "GET_SIGNED_JWT":
      return `signs a JWT (${typeof input["algorithm"] === "string" ? input["algorithm"] : "RS256"})${typeof input["subject"] === "string" ? ` for ${scriptLine(input["subject"])}` : ""}`;
    case "UPDATE_SECRET": {
      const secrets = /** @type {Record<string, unknown> | null} */ (input["_secrets"] !== null && typeof input["_secrets"] === "object" && !Array.isArray(input["_secrets"]) ? input["_secrets"] : null);
      const key = secrets?.["secretKey"];
      return typeof key === "string" ? `writes secret ${scriptLine(key)}` : "writes a secret";
    }
    case "NOOP":
      return "does nothing";
    case "YIELD":
      return "waits for a signal";
    case "PULL_WORKFLOW_MESSAGES": {
      const size = input["batchSize"];
      const batch = typeof size === "number" || typeof size === "string" ? `, up to ${scriptLine(String(size))} at a time` : "";
      return input["blocking"] === false ? `takes the workflow's queued messages${batch}, without waiting` : `waits for messages pushed to the workflow${batch}`;
    }
    case "EVENT":
      return typeof definitionTask.sink === "string" ? `publishes to ${scriptLine(definitionTask.sink)}` : "publishes an event";
    case "HTTP_POLL": {
      // Its settings sit in http_request or flat, nested winning (as src/engine/tasks/http-poll reads them).
      const nested = input["http_request"];
      const setting = (/** @type {string} */ name) => nested !== null && typeof nested === "object" && Object.hasOwn(nested, name) ? /** @type {Record<string, unknown>} */ (nested)[name] : input[name];
      const condition = setting("terminationCondition");
      const interval = setting("pollingInterval");
      const every = typeof interval === "number" || typeof interval === "string" ? `every ${interval} s` : "every 60 s";
      return typeof condition === "string" && condition.trim() !== "" ? `polls ${every} until ${scriptLine(condition)}` : "calls once (no terminationCondition)";
    }
    case "JOIN": {
      if (definitionTask.joinOn === undefined && definitionTask.joinsChosen === true) return "waits for the last task of each branch its fork chooses";
      const forked = definitionTask.joinOn === undefined && definitionTask.joinsForked === true;
      // A join script (Orkes' expression on a JOIN) decides when the JOIN ends, over the tasks it joins: "waits for
      // a, b" would say it waits for them all, which a script may not.
      if (typeof definitionTask.expression === "string" && definitionTask.expression.trim() !== "") {
        const over = forked ? " over every task its fork forks" : (definitionTask.joinOn ?? []).length > 0 ? ` over ${(definitionTask.joinOn ?? []).join(", ")}` : "";
        return `its join script decides when it ends${over}`;
      }
      if (forked) return "waits for every task its fork forks";
      // Every name: which branch tasks the JOIN waits for is the point of the step.
      return waitsFor(definitionTask.joinOn ?? []);
    }
    case "EXCLUSIVE_JOIN": {
      // It ends with one task, not all: the first of its joinOn that ran (a SWITCH's branch taken), else of its defaults.
      const joinOn = definitionTask.joinOn ?? [];
      const defaults = definitionTask.defaultExclusiveJoinTask ?? [];
      const first = joinOn.length > 0 ? `ends with the first of ${joinOn.join(", ")} that ran` : "";
      const otherwise = defaults.length > 0 ? `${first === "" ? "ends with the first of" : ", else of"} ${defaults.join(", ")}${first === "" ? " that ran" : ""}` : "";
      return first === "" && otherwise === "" ? "joins on nothing: waits for good" : `${first}${otherwise}`;
    }
    default:
      return null;
  }
}

/**
 * How often a DO_WHILE runs its loop, as src/engine/tasks/do-while decides it: while its `loopCondition` holds (a
 * script, or with value-param an input parameter), once for each of its `inputParameters.items` (a condition given
 * beside them is not asked), once with neither; and how many iterations `keepLastN` keeps. A WHILE's
 * condition is asked before its first iteration too (without items), so it may run none: its note says so.
 * @param {WorkflowTask} definitionTask a DO_WHILE or WHILE
 */
function repeats(definitionTask) {
  const input = definitionTask.inputParameters ?? {};
  const condition = (definitionTask.loopCondition ?? "").trim();
  const holds = condition === "" ? "" : definitionTask.evaluatorType === "value-param" ? `while input ${condition} holds` : `while ${scriptLine(condition)}`;
  const items = input["items"];
  // A list written in the definition shows as JSON; usually it is an expression such as ${workflow.input.orders}.
  const each = items === undefined || items === null ? "" : `once for each item of ${scriptLine(typeof items === "string" ? items : JSON.stringify(items))}`;
  const asksFirst = definitionTask.type === "WHILE" && !each && holds ? ", asked before the first iteration too" : "";
  // With items the list alone decides: the engine never asks the condition then (src/engine/tasks/do-while endIteration).
  const how = each || (holds ? `repeats ${holds}${asksFirst}` : "runs once");
  const keep = input["keepLastN"];
  if (keep === undefined || keep === null) return how;
  return keep === 1 ? `${how}; keeps the last iteration` : `${how}; keeps the last ${typeof keep === "string" ? keep : JSON.stringify(keep)} iterations`;
}

/**
 * True for a loop's type: DO_WHILE, and WHILE (Conductor OSS's), the same loop drawn the same way.
 * @param {string | undefined} type
 */
export function isLoop(type) {
  return type === "DO_WHILE" || type === "WHILE";
}

/**
 * True for an HTTP task's type: HTTP, and HTTP_SYNC (Conductor OSS's), the same task under another name (as
 * src/engine/model.ts `isHttpType` has it), shown the same way.
 * @param {string | undefined} type
 */
export function isHttpType(type) {
  return type === "HTTP" || type === "HTTP_SYNC";
}

/**
 * What a JOIN waits for, in words; with no task (an empty `joinOn`) it completes at once.
 * @param {string[]} refs
 */
function waitsFor(refs) {
  return refs.length === 0 ? "waits for nothing" : `waits for ${refs.join(", ")}`;
}

/**
 * The workflow's steps in definition order, each with its task instances (retries are further instances); a
 * SWITCH's steps carry its branches, each with its own steps and whether the SWITCH took it; a FORK_JOIN's its
 * branches, each with its own steps; a DO_WHILE's its loop's steps, each with its instances of every iteration.
 * @param {WorkflowTask[]} definitionTasks
 * @param {Task[]} [tasks]
 * @returns {Step[]}
 */
export function stepsOf(definitionTasks, tasks = []) {
  return stepsWithin(definitionTasks, tasks, true, false);
}

/**
 * @param {WorkflowTask[]} definitionTasks
 * @param {Task[]} tasks
 * @param {boolean} reachable false inside a branch not taken: nothing there runs, nested branches included
 * @param {boolean} inLoop true inside a DO_WHILE's loop (of any depth)
 * @returns {Step[]}
 */
function stepsWithin(definitionTasks, tasks, reachable, inLoop) {
  return definitionTasks.map((written, index) => {
    const before = definitionTasks[index - 1]?.type;
    const definitionTask = before === "FORK_JOIN_DYNAMIC" ? joiningForked(written, definitionTasks[index - 1], tasks) : before === "CONDITIONAL_FORK" ? joiningChosen(written, tasks) : written;
    const ref = definitionTask.taskReferenceName;
    const instances = tasks.filter((task) => ranInLoop(task) === inLoop && definitionReferenceName(task) === ref);
    /** @type {Step} */
    const step = { definitionTask, instances };
    if (inLoop) step.inLoop = true;
    if (!reachable) step.notTaken = true;
    // In a loop, the SWITCH's latest instance is its latest iteration's: its branch is the one shown taken.
    if (definitionTask.type === "SWITCH" || definitionTask.type === "DECISION") step.branches = branchesOf(definitionTask, instances.at(-1), tasks, reachable, inLoop);
    if (definitionTask.type === "FORK_JOIN") {
      step.forkBranches = (definitionTask.forkTasks ?? []).map((list) => ({ steps: stepsWithin(list, tasks, reachable, inLoop), notTaken: !reachable }));
    }
    if (definitionTask.type === "CONDITIONAL_FORK") step.forkBranches = chosenBranches(definitionTask, instances.at(-1), tasks, reachable, inLoop);
    if (definitionTask.type === "FORK_JOIN_DYNAMIC") {
      const forked = forkedTasks(definitionTask, tasks);
      // Before it ran there is nothing to draw: its note says what it will fork.
      if (forked.length > 0) step.forkBranches = forked.map((task) => ({ steps: stepsWithin([task], tasks, reachable, inLoop), notTaken: !reachable }));
    }
    if (isLoop(definitionTask.type)) step.loop = { steps: stepsWithin(definitionTask.loopOver ?? [], tasks, reachable, true), notTaken: !reachable };
    const join = instances.at(-1);
    if (definitionTask.type === "JOIN" && join?.status === "IN_PROGRESS") step.waitingOn = notEndedWell(definitionTask.joinOn ?? [], tasks, join.loopOverTask === true ? join.iteration : undefined);
    return step;
  });
}

/**
 * The tasks the latest run of FORK_JOIN_DYNAMIC `fork` forked, as each forked task's own `workflowTask` shows it (the
 * fork's instance names them in its `inputData.forkedTasks`); none before it ran. In a loop, its latest iteration's.
 * @param {WorkflowTask} fork
 * @param {Task[]} tasks
 * @returns {WorkflowTask[]}
 */
function forkedTasks(fork, tasks) {
  const run = latestRunOf(fork, tasks);
  const refs = run?.status === "COMPLETED" ? run.inputData?.["forkedTasks"] : undefined;
  if (!Array.isArray(refs)) return [];
  return refs.flatMap((ref) => {
    const written = tasks.findLast((task) => definitionReferenceName(task) === ref)?.workflowTask;
    return written?.taskReferenceName === ref ? [/** @type {WorkflowTask} */ (written)] : [];
  });
}

/**
 * The latest instance of definition task `task` (in a loop, `ref__<iteration>`), if it ran.
 * @param {WorkflowTask} task
 * @param {Task[]} tasks
 */
function latestRunOf(task, tasks) {
  return tasks.findLast((each) => definitionReferenceName(each) === task.taskReferenceName);
}

/**
 * JOIN `join` after FORK_JOIN_DYNAMIC `fork`, waiting for what the fork forked (see the WorkflowTask type).
 * @param {WorkflowTask} join
 * @param {WorkflowTask} fork
 * @param {Task[]} tasks
 * @returns {WorkflowTask}
 */
function joiningForked(join, fork, tasks) {
  const { joinOn: _written, ...rest } = join;
  const run = latestRunOf(fork, tasks);
  /** @type {WorkflowTask} */
  const joining = { ...rest, joinsForked: true };
  return run?.status === "COMPLETED" ? { ...joining, joinOn: forkedTasks(fork, tasks).map((task) => task.taskReferenceName) } : joining;
}

/**
 * JOIN `join` after a CONDITIONAL_FORK, waiting for the last task of each branch the fork chose: as its latest
 * instance's input names them, once it is scheduled (see the WorkflowTask type).
 * @param {WorkflowTask} join
 * @param {Task[]} tasks
 * @returns {WorkflowTask}
 */
function joiningChosen(join, tasks) {
  const { joinOn: _written, ...rest } = join;
  const chosen = latestRunOf(join, tasks)?.inputData?.["joinOn"];
  /** @type {WorkflowTask} */
  const joining = { ...rest, joinsChosen: true };
  return Array.isArray(chosen) ? { ...joining, joinOn: chosen.filter((ref) => typeof ref === "string") } : joining;
}

/**
 * A CONDITIONAL_FORK's branches, then its default branch (when it has tasks), each labelled with its condition. Once
 * its latest instance `latest` has ended, the branches it did not choose are not taken: those whose first task was not
 * scheduled after it (as the service runs the chosen ones at once); all of them when it failed, choosing none.
 * @param {WorkflowTask} definitionTask a CONDITIONAL_FORK
 * @param {Task | undefined} latest
 * @param {Task[]} tasks
 * @param {boolean} reachable
 * @param {boolean} inLoop
 * @returns {ForkBranch[]}
 */
function chosenBranches(definitionTask, latest, tasks, reachable, inLoop) {
  const since = latest === undefined ? -1 : tasks.indexOf(latest);
  const decided = latest !== undefined && !["SCHEDULED", "IN_PROGRESS"].includes(latest.status);
  /** @param {WorkflowTask[]} list */
  const chosen = (list) => {
    const first = list[0];
    return latest?.status === "COMPLETED" && first !== undefined && tasks.some((task, position) => position > since && definitionReferenceName(task) === first.taskReferenceName);
  };
  /** @type {Array<{ list: WorkflowTask[], label: string }>} */
  const lists = (definitionTask.conditionalBranches ?? []).map((branch, index) => ({ list: branch.tasks ?? [], label: `branch ${index + 1} ${conditionText(branch.condition)}` }));
  if ((definitionTask.defaultCase ?? []).length > 0) lists.push({ list: definitionTask.defaultCase ?? [], label: "default, when no branch is chosen" });
  return lists.map(({ list, label }) => {
    const notTaken = !reachable || (decided && !chosen(list));
    return { steps: stepsWithin(list, tasks, !notTaken, inLoop), notTaken, label };
  });
}

/**
 * When a CONDITIONAL_FORK's branch runs, in words: `if <script>`, `if input <name>` for value-param, `always` without a
 * condition (none, or neither field given).
 * @param {{ evaluatorType?: string, expression?: string } | null | undefined} condition
 */
function conditionText(condition) {
  const expression = condition?.expression;
  if (typeof expression !== "string" || expression === "") return "always";
  return condition?.evaluatorType === "value-param" ? `if input ${expression}` : `if ${scriptLine(expression)}`;
}

/**
 * The reference name a task instance has in the definition (src/engine/plan.ts, definitionReferenceName): the one of
 * the definition task it runs (`workflowTask`), as a task of a DO_WHILE's loop runs as `ref__<iteration>` (in a loop
 * nested in others, `ref__<outer>__<inner>`); without it, its own less the iteration.
 * @param {Task} task
 */
function definitionReferenceName(task) {
  const written = task.workflowTask?.taskReferenceName;
  if (typeof written === "string") return written;
  if (task.loopOverTask !== true || task.iteration === undefined) return task.referenceTaskName;
  const suffix = `__${task.iteration}`;
  return task.referenceTaskName.endsWith(suffix) ? task.referenceTaskName.slice(0, -suffix.length) : task.referenceTaskName;
}

/**
 * Whether a task instance is a run of a task inside a DO_WHILE's loop: `loopOverTask`, and named after its iteration.
 * A DO_WHILE itself shows `loopOverTask` too once it runs (Conductor's Task: iteration > 0), under its own name.
 * @param {Task} task
 */
function ranInLoop(task) {
  return task.loopOverTask === true && task.referenceTaskName !== definitionReferenceName(task);
}

/** The statuses a JOIN takes as a task's good end (an optional task's failure and a skip included, as Conductor's). */
const ENDED_WELL = new Set(["COMPLETED", "COMPLETED_WITH_ERRORS", "SKIPPED"]);

/**
 * The reference names among `refs` whose latest instance has not ended well (or that have none yet); for a JOIN of a
 * fork in a DO_WHILE's loop, the instances of its own `iteration` (run as `ref__<iteration>`).
 * @param {string[]} refs
 * @param {Task[]} tasks
 * @param {number} [iteration]
 */
function notEndedWell(refs, tasks, iteration) {
  return refs.filter((ref) => {
    const latest = tasks.findLast((task) => (iteration === undefined ? task.referenceTaskName === ref : task.iteration === iteration && definitionReferenceName(task) === ref));
    return !latest || !ENDED_WELL.has(latest.status);
  });
}

/**
 * @param {WorkflowTask} definitionTask a SWITCH
 * @param {Task | undefined} latest its latest instance
 * @param {Task[]} tasks
 * @param {boolean} reachable
 * @param {boolean} inLoop
 * @returns {Branch[]}
 */
function branchesOf(definitionTask, latest, tasks, reachable, inLoop) {
  const cases = Object.entries(definitionTask.decisionCases ?? {});
  /** @type {Array<[string | null, WorkflowTask[]]>} */
  const lists = [...cases, [null, definitionTask.defaultCase ?? []]];
  // An empty case is no branch of its own: it takes the default, as the service (and Conductor) runs it.
  const taken = reachable ? takenBranch(cases.map(([value, list]) => (list.length > 0 ? value : null)), latest, definitionTask.type) : -1;
  return lists.map(([caseValue, list], index) => {
    const isTaken = taken === undefined ? null : taken === index;
    return { caseValue, taken: isTaken, steps: stepsWithin(list, tasks, isTaken !== false, inLoop) };
  });
}

/**
 * The branch a SWITCH's (or DECISION's) latest instance took, as the service chooses it (src/engine/plan.ts,
 * nextPlanIndex): a COMPLETED one runs the case equal to its `evaluationResult[0]` (a DECISION's `caseOutput[0]`),
 * compared as a string, else the default; a skipped one, or an optional one that failed, runs none.
 * @param {Array<string | null>} caseValues the cases in order, null for an empty one (which takes the default)
 * @param {Task | undefined} latest
 * @param {string} type SWITCH or DECISION
 * @returns {number | undefined} the branch's index (the default's is `caseValues.length`), -1 for none, undefined
 *   while it is not decided
 */
function takenBranch(caseValues, latest, type) {
  if (!latest) return undefined;
  if (latest.status === "SKIPPED" || latest.status === "COMPLETED_WITH_ERRORS") return -1;
  if (latest.status !== "COMPLETED") return undefined;
  const chosen = caseOf(latest.outputData?.[type === "DECISION" ? "caseOutput" : "evaluationResult"]);
  if (chosen === undefined) return -1;
  const index = caseValues.indexOf(chosen);
  return index >= 0 ? index : caseValues.length;
}

/**
 * Conductor's case value of an evaluation result (`String.valueOf` of its one element), as src/engine/plan.ts has it.
 * @param {unknown} evaluationResult
 */
function caseOf(evaluationResult) {
  if (!Array.isArray(evaluationResult) || evaluationResult.length === 0) return undefined;
  const value = evaluationResult[0];
  return typeof value === "string" ? value : JSON.stringify(value ?? null);
}

/**
 * Every step, those inside SWITCH and FORK_JOIN branches and DO_WHILE loops included, in definition order (a SWITCH,
 * FORK_JOIN or DO_WHILE, its branches' or loop's steps, then what follows it).
 * @param {Step[]} steps
 * @returns {Step[]}
 */
export function allSteps(steps) {
  return steps.flatMap((step) => [step, ...[...(step.branches ?? []), ...(step.forkBranches ?? []), ...(step.loop ? [step.loop] : [])].flatMap((group) => allSteps(group.steps))]);
}

/**
 * The instances of a step's latest run: all of them (its first attempt, then its retries), but for a step of a
 * DO_WHILE's loop, whose instances are its runs in each iteration: its latest one and those right before it of the
 * same iteration.
 * @param {Step} step
 * @returns {Task[]}
 */
export function attemptsOf(step) {
  if (!step.inLoop) return step.instances;
  const iteration = step.instances.at(-1)?.iteration;
  const earlier = step.instances.findLastIndex((task) => task.iteration !== iteration);
  return step.instances.slice(earlier + 1);
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
 * took it; a system step (WAIT, SET_VARIABLE, TERMINATE, FORK_JOIN, JOIN, INLINE, JSON_JQ_TRANSFORM, DO_WHILE, HUMAN) says what it does; a SWITCH
 * step shows its expression and its branches, each labelled with its case, the one it took and those it did not said
 * in words (not only by their look); a FORK_JOIN step shows its branches, numbered; a waiting JOIN says which of its
 * tasks it still waits for; a DO_WHILE step says which iteration it runs (or how many it ran) and shows its loop's
 * steps under it, each with the iteration its status is from.
 * @param {Step[]} steps
 * @param {DiagramOptions} [options]
 */
export function diagram(steps, options = {}) {
  return h("ol", { className: "diagram", "aria-label": "Workflow diagram" },
    h("li", { className: "terminal" }, "start"),
    steps.map((step) => node(step, options)),
    h("li", { className: "terminal" }, "end"));
}

/**
 * One step of a diagram.
 * @param {Step} step
 * @param {DiagramOptions} options
 * @returns {HTMLLIElement}
 */
function node(step, options) {
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
    runNote(step));
  const extra = [];
  const waitingFor = workerNote(definitionTask, latest) ?? dynamicNote(definitionTask, latest) ?? systemTaskNote(definitionTask);
  if (waitingFor) extra.push(h("span", { className: "node-note" }, waitingFor));
  const progress = isLoop(definitionTask.type) ? loopProgress(latest) : null;
  if (progress) extra.push(h("span", { className: "node-note loop-progress" }, progress));
  if (step.waitingOn && step.waitingOn.length > 0) extra.push(h("span", { className: "node-note join-pending" }, `still waiting for ${step.waitingOn.join(", ")}`));
  if (definitionTask.type === "SUB_WORKFLOW") {
    const childName = definitionTask.subWorkflowParam?.name ?? definitionTask.inputParameters?.["subWorkflowParam"];
    if (childId) {
      extra.push(h("a", { href: `#/executions/${childId}`, className: "node-link" }, "open child execution"));
      if (options.loadChild) extra.push(nestedChild(childId, options.loadChild));
    } else if (typeof childName === "string") {
      extra.push(h("span", { className: "node-note" }, `runs ${childName}`));
    }
  }
  // What a START_WORKFLOW started, once it has (its id is chosen before, so only a COMPLETED one links).
  const started = definitionTask.type === "START_WORKFLOW" && latest?.status === "COMPLETED" ? latest.outputData?.["workflowId"] : undefined;
  if (typeof started === "string") extra.push(h("a", { href: `#/executions/${started}`, className: "node-link" }, "open started execution"));
  // The execution an UPDATE_TASK updated a task of, once it has (its own workflow's needs no link).
  const updated = definitionTask.type === "UPDATE_TASK" && latest?.status === "COMPLETED" ? latest.outputData?.["workflowId"] : undefined;
  if (typeof updated === "string" && updated !== latest?.workflowInstanceId) extra.push(h("a", { href: `#/executions/${updated}`, className: "node-link" }, "open updated execution"));
  if (step.branches) extra.push(switchExpression(definitionTask), switchBranches(definitionTask, step.branches, options));
  if (step.forkBranches) extra.push(forkBranches(definitionTask, step.forkBranches, options));
  if (step.loop) extra.push(loopSteps(definitionTask, step.loop, options));
  return h("li", { className: `node${selected ? " selected" : ""}` }, body, extra);
}

/**
 * Under a step's status: how many attempts its latest run took, when more than one; for a step of a loop, first the
 * iteration its status is from (an earlier one's, while the loop's current iteration has not reached it yet).
 * @param {Step} step
 */
function runNote(step) {
  const attempts = attemptsOf(step).length;
  const tried = attempts > 1 ? `${attempts} attempts` : "";
  const iteration = step.inLoop ? step.instances.at(-1)?.iteration : undefined;
  const text = iteration === undefined ? tried : `iteration ${iteration}${tried ? `, ${tried}` : ""}`;
  return text ? h("span", { className: "node-attempts" }, text) : null;
}

/**
 * Where a DO_WHILE's latest instance is: the iteration it runs (of how many items, iterating over a list), how many
 * it ran once it completed, the one it ended in otherwise; null before it started (or skipped, having run none).
 * @param {Task | undefined} latest
 * @returns {string | null}
 */
function loopProgress(latest) {
  if (!latest) return null;
  const output = latest.outputData?.["iteration"];
  const iteration = latest.iteration ?? (typeof output === "number" ? output : 0);
  if (latest.status === "COMPLETED") return iteration === 0 ? "ran no iteration" : iteration === 1 ? "ran 1 iteration" : `ran ${iteration} iterations`;
  if (iteration < 1) return null;
  if (latest.status === "SCHEDULED" || latest.status === "IN_PROGRESS") {
    const items = latest.inputData?.["items"];
    return Array.isArray(items) ? `iteration ${iteration} of ${items.length}` : `iteration ${iteration}`;
  }
  return `ended in iteration ${iteration}`;
}

/** A SWITCH's expression longer than this is cut in the diagram (the whole of it is its tooltip and in its JSON). */
const EXPRESSION_SHOWN = 60;

/**
 * What a SWITCH decides on, in a line: its evaluator and expression; for a DECISION, its caseExpression or (without
 * one) its caseValueParam, as the service evaluates it.
 * @param {WorkflowTask} definitionTask
 */
function switchExpression(definitionTask) {
  const [label, expression] = definitionTask.type !== "DECISION" ? [definitionTask.evaluatorType ?? "value-param", definitionTask.expression ?? ""]
    : (definitionTask.caseExpression ?? "").trim() !== "" ? ["caseExpression", definitionTask.caseExpression ?? ""]
    : ["caseValueParam", definitionTask.caseValueParam ?? ""];
  const shown = expression.length > EXPRESSION_SHOWN ? `${expression.slice(0, EXPRESSION_SHOWN - 1)}…` : expression;
  return h("span", { className: "node-note switch-expression", title: expression }, `${label}: `, h("code", {}, shown));
}

/**
 * A SWITCH's branches side by side (stacked where there is no room), each a labelled sequence of its steps.
 * @param {WorkflowTask} definitionTask
 * @param {Branch[]} branches
 * @param {DiagramOptions} options
 * @returns {HTMLUListElement}
 */
function switchBranches(definitionTask, branches, options) {
  return h("ul", { className: "switch-branches", "aria-label": `Branches of ${definitionTask.taskReferenceName}` },
    branches.map((branch) => {
      // An empty case value would leave the label blank.
      const caseText = branch.caseValue === "" ? '""' : branch.caseValue;
      const name = caseText === null ? "default" : `case ${caseText}`;
      const state = branch.taken === null ? "" : branch.taken ? " taken" : " not-taken";
      return h("li", { className: `branch${state}`, "data-case": branch.caseValue ?? "", "data-default": branch.caseValue === null ? "true" : null },
        h("p", { className: "branch-label" },
          h("span", { className: "branch-case" }, caseText === null ? "default" : ["case ", h("code", {}, caseText)]),
          // The space keeps "taken" a word of its own for a screen reader.
          branch.taken === null ? null : " ",
          branch.taken === null ? null : h("span", { className: `branch-state badge ${branch.taken ? "status-COMPLETED" : "status-NOT_STARTED"}` }, branch.taken ? "taken" : "not taken")),
        branch.steps.length > 0
          ? h("ol", { className: "diagram", "aria-label": `Steps of ${definitionTask.taskReferenceName}, ${name}` }, branch.steps.map((step) => node(step, options)))
          : h("p", { className: "empty" }, caseText === null ? "No tasks: the workflow goes on after the SWITCH." : "No tasks: this case runs the default branch."));
    }));
}

/**
 * A FORK_JOIN's branches side by side (stacked where there is no room), as a SWITCH's are: each a numbered sequence
 * of its steps. All of them run, so none is marked unless the fork lies in a SWITCH branch not taken.
 * @param {WorkflowTask} definitionTask
 * @param {ForkBranch[]} branches
 * @param {DiagramOptions} options
 * @returns {HTMLUListElement}
 */
function forkBranches(definitionTask, branches, options) {
  return h("ul", { className: "fork-branches", "aria-label": `Branches of ${definitionTask.taskReferenceName}` },
    branches.map((branch, index) => {
      return h("li", { className: `branch${branch.notTaken ? " not-taken" : ""}`, "data-branch": String(index + 1) },
        framedSteps(definitionTask, branch.label ?? `branch ${index + 1}`, branch, options));
    }));
}

/**
 * The inside of a fork's branch or a loop's frame: its label (marked not taken when it lies in a SWITCH branch not
 * taken) and its steps in order.
 * @param {WorkflowTask} definitionTask
 * @param {string} name
 * @param {{ steps: Step[], notTaken: boolean }} frame
 * @param {DiagramOptions} options
 */
function framedSteps(definitionTask, name, frame, options) {
  return [
    h("p", { className: "branch-label" },
      h("span", { className: "branch-case" }, name),
      frame.notTaken ? [" ", h("span", { className: "branch-state badge status-NOT_STARTED" }, "not taken")] : null),
    // A valid definition has no empty branch or loop; one still gets a line rather than a blank box.
    frame.steps.length > 0
      ? h("ol", { className: "diagram", "aria-label": `Steps of ${definitionTask.taskReferenceName}, ${name}` }, frame.steps.map((step) => node(step, options)))
      : h("p", { className: "empty" }, "No tasks."),
  ];
}

/**
 * A DO_WHILE's loop under its step, framed as a branch is: the sequence of its steps, run in each iteration. Dimmed
 * and marked not taken, as a fork's branches are, when the DO_WHILE lies in a SWITCH branch not taken.
 * @param {WorkflowTask} definitionTask
 * @param {Loop} loop
 * @param {DiagramOptions} options
 * @returns {HTMLDivElement}
 */
function loopSteps(definitionTask, loop, options) {
  return h("div", { className: `loop${loop.notTaken ? " not-taken" : ""}`, role: "group", "aria-label": `Loop of ${definitionTask.taskReferenceName}` },
    framedSteps(definitionTask, "each iteration", loop, options));
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
      (error) => details.append(h("p", { className: "error" }, errorMessage(error))),
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
