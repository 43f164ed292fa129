/**
 * Orkes' human task settings: what a HUMAN task's `inputParameters.__humanTaskDefinition` says about who works on it
 * (an escalation chain of assignments, each for so many minutes), what happens once the chain is used up, and which
 * user form it is filled in with. Read the same way when a definition is registered (where `${...}` values are left
 * for the run) and when a task starts (from its resolved input).
 */
import { isJacksonNullText, jacksonBooleanOf, MAX_JAVA_INT, wrapperIntegerOf } from "../../definition/checks";
import type { JsonObject, JsonValue } from "../../model";
import { childPath, registrationOnly, type ValidationIssue } from "../../validation-issue";
import { isDomainValue, isStartedVersion, loneSurrogateDomainProblem, MAX_DOMAIN_LENGTH, taskToDomainOf, workflowVersionOf } from "../workflow-start-fields";
import { isTextScalar, TEXT_SCALAR_RULE } from "../../scalar-text";

/** Where a HUMAN task's input keeps its settings (Orkes' key). */
export const HUMAN_SETTINGS_KEY = "__humanTaskDefinition";

/** Kinds of assignee (Orkes'): a user or group of this service, or one known only to the system driving the UI. */
export const HUMAN_USER_TYPES = ["CONDUCTOR_USER", "CONDUCTOR_GROUP", "EXTERNAL_USER", "EXTERNAL_GROUP"] as const;
/** One of {@link HUMAN_USER_TYPES}. */
export type HumanUserType = (typeof HUMAN_USER_TYPES)[number];

/** Who a human task is assigned to or claimed by: a user id (or group id) and its kind. */
export interface HumanUser {
  user: string;
  userType: HumanUserType;
}

/** One step of the escalation chain: its assignee, and the minutes it has to claim the task (0: no limit, the last step). */
export interface HumanAssignment {
  assignee: HumanUser;
  slaMinutes: number;
}

/** What happens when the last assignment's minutes run out unclaimed (Orkes'). */
export const COMPLETION_STRATEGIES = ["LEAVE_OPEN", "TERMINATE"] as const;
/** One of {@link COMPLETION_STRATEGIES}. */
export type CompletionStrategy = (typeof COMPLETION_STRATEGIES)[number];

/** The user form a task is filled in with: a registered template's name and version (0 or absent: its latest). */
export interface FormReference {
  name: string;
  version?: number;
}

/** When a human task's trigger fires (Orkes'): as the task enters a state, or as its assignee or claimant changes. */
export const HUMAN_TRIGGER_TYPES = ["PENDING", "ASSIGNED", "IN_PROGRESS", "COMPLETED", "TIMED_OUT", "ASSIGNEE_CHANGED", "CLAIMANT_CHANGED"] as const;
/** One of {@link HUMAN_TRIGGER_TYPES}. */
export type HumanTriggerType = (typeof HUMAN_TRIGGER_TYPES)[number];

/** A workflow a human task starts when `triggerType` happens to it (Orkes' `taskTriggers`, its `startWorkflowRequest`). */
export interface HumanTrigger {
  triggerType: HumanTriggerType;
  name: string;
  version?: number;
  input: JsonObject;
  correlationId?: string;
  taskToDomain?: Record<string, string>;
}

/** A HUMAN task's settings, as read from its input. */
export interface HumanSettings {
  displayName?: string;
  assignments: HumanAssignment[];
  completionStrategy: CompletionStrategy;
  form?: FormReference;
  triggers: HumanTrigger[];
  /** Orkes' `autoClaim`: the first assignee claims the task as it starts (it starts IN_PROGRESS, not ASSIGNED). */
  autoClaim?: true;
}

/** Most assignments one chain may have. */
export const MAX_ASSIGNMENTS = 100;
/** Longest a single assignment may last: a year, in minutes. */
const MAX_SLA_MINUTES = 366 * 24 * 60;

const NO_SETTINGS: HumanSettings = { assignments: [], completionStrategy: "LEAVE_OPEN", triggers: [] };
/** Most triggers one task may have. */
const MAX_TRIGGERS = 20;

/**
 * A trigger left as Orkes' UI writes a new one (`{"triggerType": "", "startWorkflowRequest": {"name": "", "version": ""}}`,
 * as in Orkes' own Human task example): no event and no workflow, so none.
 */
function isUnfilledTrigger(trigger: Record<string, unknown>): boolean {
  const blank = (value: unknown) => value === undefined || value === null || value === "";
  const request = trigger["startWorkflowRequest"];
  return blank(trigger["triggerType"]) && (blank(request) || (typeof request === "object" && !Array.isArray(request) && blank((request as Record<string, unknown>)["name"])));
}

type Record_ = { readonly [key: string]: unknown };

/**
 * A Boolean setting as Jackson reads Orkes' Boolean field: true or false, or their text as Jackson takes it (see
 * `jacksonBooleanOf`; an expression may resolve to text); absent, null or the text Jackson reads as null ("", "null":
 * `isJacksonNullText`) is false. Undefined for anything else.
 */
function settingBoolean(value: unknown): boolean | undefined {
  if (value === undefined || value === null || isJacksonNullText(value)) return false;
  const read = jacksonBooleanOf(value);
  return typeof read === "boolean" ? read : undefined;
}

function isRecord(value: unknown): value is Record_ {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isExpression(value: unknown): value is string {
  return typeof value === "string" && value.includes("${");
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** Reads settings and collects their problems; `deferred` is set when a `${...}` value leaves part of them to the run. */
class SettingsReader {
  readonly issues: ValidationIssue[] = [];
  deferred = false;

  constructor(private readonly expressionsAllowed: boolean) {}

  /** True (and the value deferred) for an expression where expressions are allowed. */
  later(value: unknown): boolean {
    if (!this.expressionsAllowed || !isExpression(value)) return false;
    this.deferred = true;
    return true;
  }

  problem(path: string, expected: string, value: unknown): undefined {
    this.issues.push({ path, message: `${path.split(".").pop()} must be ${expected}, but received ${describe(value)}` });
    return undefined;
  }

  user(value: unknown, path: string): HumanUser | undefined {
    if (this.later(value)) return undefined;
    if (!isRecord(value)) return this.problem(path, "an object with user and userType", value);
    const user = value["user"];
    const userType = value["userType"];
    const userOk = this.later(user) || (typeof user === "string" && user.trim() !== "" && user.length <= 256);
    const typeOk = this.later(userType) || (typeof userType === "string" && (HUMAN_USER_TYPES as readonly string[]).includes(userType));
    if (!userOk) this.problem(childPath(path, "user"), "a non-empty string of at most 256 characters (a user or group id)", user);
    if (!typeOk) this.problem(childPath(path, "userType"), `one of ${HUMAN_USER_TYPES.join(", ")}`, userType);
    if (!userOk || !typeOk || this.deferred) return undefined;
    return { user: user as string, userType: userType as HumanUserType };
  }

  assignment(value: unknown, path: string): HumanAssignment | undefined {
    if (this.later(value)) return undefined;
    if (!isRecord(value)) return this.problem(path, "an object with assignee and slaMinutes", value);
    const assignee = this.user(value["assignee"], childPath(path, "assignee"));
    const given = value["slaMinutes"];
    if (this.later(given)) return undefined;
    // Orkes' HumanTaskAssignment's Long, read by Jackson: its digits as text are the number, "" and "null" none (no limit).
    const minutes = wrapperIntegerOf(given) ?? 0;
    if (typeof minutes !== "number" || !Number.isSafeInteger(minutes) || minutes < 0 || minutes > MAX_SLA_MINUTES) {
      return this.problem(childPath(path, "slaMinutes"), `a whole number of minutes from 0 (no limit) to ${MAX_SLA_MINUTES}, or its digits as text`, given);
    }
    return assignee === undefined ? undefined : { assignee, slaMinutes: minutes };
  }

  assignments(value: unknown, path: string): HumanAssignment[] {
    if (this.later(value)) return [];
    if (!Array.isArray(value) || value.length > MAX_ASSIGNMENTS) {
      this.problem(path, `an array of at most ${MAX_ASSIGNMENTS} assignments ({assignee: {user, userType}, slaMinutes})`, value);
      return [];
    }
    const read = value.map((entry, index) => this.assignment(entry, childPath(path, index)));
    return read.filter((entry): entry is HumanAssignment => entry !== undefined);
  }

  form(value: unknown, path: string): FormReference | undefined {
    if (value === undefined || value === null || this.later(value)) return undefined;
    if (!isRecord(value)) return this.problem(path, "an object with name and version", value);
    const name = value["name"];
    const given = value["version"];
    // Orkes' UserFormTemplate's Integer, read by Jackson: its digits as text are the number, "" and "null" none; past
    // Java's int (as a number or as text) Jackson refuses it.
    const version = wrapperIntegerOf(given);
    // No form: what the Python client's HumanTask writes when given none ({"name": null, "version": 0}), with or
    // without the null (a serializer that drops nulls).
    if ((name === undefined || name === null || name === "") && (version === undefined || version === 0)) return undefined;
    const nameOk = this.later(name) || (typeof name === "string" && name.trim() !== "");
    const versionOk = version === undefined || this.later(given) || (typeof version === "number" && Number.isInteger(version) && version >= 0 && version <= MAX_JAVA_INT);
    if (!nameOk) this.problem(childPath(path, "name"), "a non-empty string (a registered user form)", name);
    if (!versionOk) this.problem(childPath(path, "version"), `a whole number from 0 to ${MAX_JAVA_INT}, or its digits as text (0, absent, "" or "null": the latest)`, given);
    if (!nameOk || !versionOk || this.deferred) return undefined;
    return typeof version === "number" && version > 0 ? { name: name as string, version } : { name: name as string };
  }

  trigger(value: unknown, path: string): HumanTrigger | undefined {
    if (this.later(value)) return undefined;
    if (!isRecord(value)) return this.problem(path, "an object with triggerType and startWorkflowRequest", value);
    if (isUnfilledTrigger(value)) return undefined;
    const type = value["triggerType"];
    const typeOk = this.later(type) || (typeof type === "string" && (HUMAN_TRIGGER_TYPES as readonly string[]).includes(type));
    if (!typeOk) this.problem(childPath(path, "triggerType"), `one of ${HUMAN_TRIGGER_TYPES.join(", ")}`, type);
    const requestPath = childPath(path, "startWorkflowRequest");
    const request = value["startWorkflowRequest"];
    if (this.later(request)) return undefined;
    if (!isRecord(request)) return this.problem(requestPath, "an object with at least name (the workflow to start)", request);
    const { name, version, input, correlationId, taskToDomain } = request;
    const nameOk = this.later(name) || (typeof name === "string" && name.trim() !== "");
    if (!nameOk) this.problem(childPath(requestPath, "name"), "a non-empty string (the workflow to start)", name);
    // Orkes' StartWorkflowRequest's Integer, read as a START_WORKFLOW's and the API's start read theirs: digits as text
    // (a sign and spaces around allowed) are the number, "", blank and "null" none.
    const versionOk = this.later(version) || isStartedVersion(version);
    if (!versionOk) this.problem(childPath(requestPath, "version"), "a whole number of at least 0, or its digits as text (absent, \"\" or \"null\": the latest; 0: version 0 when one is registered, else the latest)", version);
    const inputOk = input === undefined || input === null || this.later(input) || isRecord(input);
    if (!inputOk) this.problem(childPath(requestPath, "input"), "an object", input);
    // A String of Orkes' StartWorkflowRequest: Jackson takes a number or boolean (an order number) as its text.
    const correlationOk = correlationId === undefined || correlationId === null || isTextScalar(correlationId);
    if (!correlationOk) this.problem(childPath(requestPath, "correlationId"), TEXT_SCALAR_RULE, correlationId);
    // Orkes' trigger holds a StartWorkflowRequest, whose Map<String, String> Jackson fills with a number's or boolean's
    // text and a null (no domain for that task), as a start's taskToDomain is read (taskToDomainOf).
    const domainsOk = taskToDomain === undefined || taskToDomain === null || this.later(taskToDomain) || (isRecord(taskToDomain) && Object.values(taskToDomain).every(isDomainValue));
    if (!domainsOk) this.problem(childPath(requestPath, "taskToDomain"), `an object of task name to domain, each a string (an expression is allowed), a number or a boolean (its text), or null (none for that task); each domain of a comma-separated list at most ${MAX_DOMAIN_LENGTH} characters`, taskToDomain);
    // As the task starts (resolved, a literal too): a domain holding half a character fails it, as a START_WORKFLOW's does.
    const halfCharacter = !this.expressionsAllowed && domainsOk && isRecord(taskToDomain) ? loneSurrogateDomainProblem(taskToDomain, "taskToDomain") : undefined;
    if (halfCharacter !== undefined) this.issues.push({ path: childPath(requestPath, "taskToDomain"), message: halfCharacter });
    if (!typeOk || !nameOk || !versionOk || !inputOk || !correlationOk || !domainsOk || halfCharacter !== undefined || this.deferred) return undefined;
    const trigger: HumanTrigger = { triggerType: type as HumanTriggerType, name: name as string, input: (input ?? {}) as JsonObject };
    const startedVersion = workflowVersionOf(version as JsonValue | undefined, "version");
    if (typeof startedVersion === "number") trigger.version = startedVersion;
    if (isTextScalar(correlationId)) trigger.correlationId = String(correlationId);
    const domains = taskToDomainOf(taskToDomain as JsonValue | undefined);
    if (domains !== undefined) trigger.taskToDomain = domains;
    return trigger;
  }

  triggers(value: unknown, path: string): HumanTrigger[] {
    if (value === undefined || value === null || this.later(value)) return [];
    if (!Array.isArray(value) || value.length > MAX_TRIGGERS) {
      this.problem(path, `an array of at most ${MAX_TRIGGERS} triggers ({triggerType, startWorkflowRequest})`, value);
      return [];
    }
    return value.map((entry, index) => this.trigger(entry, childPath(path, index))).filter((entry): entry is HumanTrigger => entry !== undefined);
  }

  settings(value: unknown, path: string): HumanSettings | undefined {
    if (value === undefined || value === null) return NO_SETTINGS;
    if (this.later(value)) return undefined;
    if (!isRecord(value)) return this.problem(path, "an object (Orkes' human task definition)", value);
    const displayName = value["displayName"];
    if (displayName !== undefined && displayName !== null && typeof displayName !== "string") this.problem(childPath(path, "displayName"), "a string", displayName);
    const strategy = value["assignmentCompletionStrategy"] ?? "LEAVE_OPEN";
    if (!this.later(strategy) && !(COMPLETION_STRATEGIES as readonly unknown[]).includes(strategy)) {
      this.problem(childPath(path, "assignmentCompletionStrategy"), `one of ${COMPLETION_STRATEGIES.join(", ")}`, strategy);
    }
    const triggers = this.triggers(value["taskTriggers"], childPath(path, "taskTriggers"));
    // The official JavaScript client's humanTask() writes one `assignee`, for good: a chain of one without a limit.
    const single = value["assignee"];
    const assignments =
      value["assignments"] !== undefined && value["assignments"] !== null
        ? this.assignments(value["assignments"], childPath(path, "assignments"))
        : single !== undefined && single !== null
          ? [this.user(single, childPath(path, "assignee"))].filter((user): user is HumanUser => user !== undefined).map((assignee) => ({ assignee, slaMinutes: 0 }))
          : [];
    const form = this.form(value["userFormTemplate"], childPath(path, "userFormTemplate"));
    // Refused as registered; as a task starts or changes, one that is no boolean claims nothing, as it did before it was
    // read: a definition registered then still starts, and a task started then still fires its triggers.
    const autoClaim = settingBoolean(value["autoClaim"]);
    if (this.expressionsAllowed && !this.later(value["autoClaim"]) && autoClaim === undefined) {
      this.problem(childPath(path, "autoClaim"), "true or false", value["autoClaim"]);
      registrationOnly(this.issues[this.issues.length - 1]!);
    }
    if (this.issues.length > 0 || this.deferred) return undefined;
    const settings: HumanSettings = { assignments, completionStrategy: strategy as CompletionStrategy, triggers };
    if (typeof displayName === "string" && displayName !== "") settings.displayName = displayName;
    if (form !== undefined) settings.form = form;
    if (autoClaim === true) settings.autoClaim = true;
    return settings;
  }
}

/**
 * Problems in the settings of a HUMAN task as registered (`path` is its input's path); `${...}` values pass, to be
 * checked once resolved, when the task starts.
 */
export function humanSettingsIssues(input: Record_, path: string): ValidationIssue[] {
  const reader = new SettingsReader(true);
  reader.settings(input[HUMAN_SETTINGS_KEY], childPath(path, HUMAN_SETTINGS_KEY));
  return reader.issues;
}

/** The settings a started HUMAN task's resolved input gives, or what is wrong with them. */
export function humanSettingsOf(input: JsonObject): HumanSettings | { problem: string } {
  const reader = new SettingsReader(false);
  const value: JsonValue | undefined = input[HUMAN_SETTINGS_KEY];
  const settings = reader.settings(value, HUMAN_SETTINGS_KEY);
  if (settings === undefined) return { problem: reader.issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ") };
  return settings;
}

/** Reads a list of assignments given from outside (a reassignment), or says what is wrong with it. */
export function assignmentsFrom(value: unknown): { assignments: HumanAssignment[] } | { issues: ValidationIssue[] } {
  const reader = new SettingsReader(false);
  const assignments = reader.assignments(value, "(body)");
  return reader.issues.length > 0 ? { issues: reader.issues } : { assignments };
}
