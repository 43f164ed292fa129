// The web UI's diagram module (ui/lib/diagram.js, plain JavaScript run in Node) on the stand-in document, with the
// shapes of what the UI tests give it and get back: one description for every diagram test.
import { FakeElement, installFakeDocument } from "./ui-document";

/** A task of a definition, as the UI reads it. */
export interface WorkflowTask {
  name?: string;
  taskReferenceName: string;
  type: string;
  inputParameters?: Record<string, unknown>;
  evaluatorType?: string;
  expression?: string;
  caseValueParam?: string;
  caseExpression?: string;
  decisionCases?: Record<string, WorkflowTask[]>;
  defaultCase?: WorkflowTask[];
  forkTasks?: WorkflowTask[][];
  conditionalBranches?: Array<{ condition?: { evaluatorType: string; expression: string } | null; tasks: WorkflowTask[] }>;
  joinOn?: string[];
  loopCondition?: string;
  loopOver?: WorkflowTask[];
  dynamicForkTasksParam?: string;
  dynamicForkJoinTasksParam?: string;
  /** Set by the diagram on a JOIN after a FORK_JOIN_DYNAMIC (see ui/lib/diagram.js's WorkflowTask). */
  joinsForked?: true;
  /** Set by the diagram on a JOIN after a CONDITIONAL_FORK (see ui/lib/diagram.js's WorkflowTask). */
  joinsChosen?: true;
}

/** A task instance of an execution, as the API returns it (the fields the diagram reads). */
export interface Task {
  taskId: string;
  referenceTaskName: string;
  taskType: string;
  status: string;
  seq: number;
  startTime: number;
  endTime: number;
  scheduledTime: number;
  workflowTask: WorkflowTask;
  inputData?: Record<string, unknown>;
  outputData: Record<string, unknown>;
  iteration?: number;
  loopOverTask?: boolean;
}

/** A step of the diagram: a definition task with its instances, and what it holds. */
export interface Step {
  definitionTask: WorkflowTask;
  instances: Task[];
  branches?: Array<{ caseValue: string | null; taken: boolean | null; steps: Step[] }>;
  forkBranches?: Array<{ steps: Step[]; notTaken: boolean }>;
  loop?: { steps: Step[]; notTaken: boolean };
  inLoop?: true;
  notTaken?: boolean;
  waitingOn?: string[];
}

/** What ui/lib/diagram.js exports that the tests use. */
export interface DiagramModule {
  stepsOf(definitionTasks: WorkflowTask[], tasks?: Task[]): Step[];
  allSteps(steps: Step[]): Step[];
  attemptsOf(step: Step): Task[];
  diagram(steps: Step[], options?: { onSelect?: (step: Step) => void; selectedRef?: string }): FakeElement;
  systemTaskNote(definitionTask: WorkflowTask): string | null;
}

installFakeDocument();

/** ui/lib/diagram.js, loaded by URL: it is plain JavaScript without type declarations, so TypeScript must not resolve it. */
export const diagramModule = (await import(/* @vite-ignore */ new URL("../../ui/lib/diagram.js", import.meta.url).href)) as DiagramModule;

/** The reference names of `steps`, in order. */
export const refsOf = (steps: Step[]): string[] => steps.map((step) => step.definitionTask.taskReferenceName);

/** The status of a step's latest instance, NOT_STARTED when it has none. */
export const statusOf = (step: Step): string => step.instances.at(-1)?.status ?? "NOT_STARTED";

/** The step of `ref` anywhere in `steps` (inside branches and loops too). */
export function stepNamed(steps: Step[], ref: string): Step {
  const found = diagramModule.allSteps(steps).find((step) => step.definitionTask.taskReferenceName === ref);
  if (!found) throw new Error(`no step ${ref}`);
  return found;
}

/** A drawn branch's (or loop's) label, and the reference names and statuses of its steps (not those of nested branches). */
export function describeFrame(frame: FakeElement): { label: string | undefined; stepsLabel: string | null | undefined; steps: string[] } {
  const label = frame.children.find((child) => child.hasClass("branch-label"));
  const steps = frame.children.find((child) => child.tagName === "ol");
  const bodies = (steps?.children ?? []).map((item) => item.children[0]!);
  return {
    label: label?.textContent,
    stepsLabel: steps?.getAttribute("aria-label"),
    steps: bodies.map((body) => `${body.getAttribute("data-ref")}:${body.getAttribute("data-status")}`),
  };
}

/** The step button of a reference name in a drawn diagram. */
export function buttonOf(root: FakeElement, ref: string): FakeElement {
  const body = root.descendants().find((element) => element.tagName === "button" && element.getAttribute("data-ref") === ref);
  if (!body) throw new Error(`no step button ${ref}`);
  return body;
}

/** The list item of a step in a drawn diagram. */
export function findItem(root: FakeElement, ref: string): FakeElement {
  const item = root.descendants().find((element) => element.tagName === "li" && element.children[0]?.getAttribute("data-ref") === ref);
  if (!item) throw new Error(`no step ${ref}`);
  return item;
}

/** The notes under a step in a drawn diagram, as text. */
export const notesOf = (root: FakeElement, ref: string): string[] =>
  findItem(root, ref).children.filter((child) => child.hasClass("node-note")).map((note) => note.textContent);

