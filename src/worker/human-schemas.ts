/**
 * The request shapes of Orkes' human task API (`/api/human/...`), checked at the edge.
 */
import * as v from "valibot";
import { DOT_SEGMENT_MESSAGE, isDotSegment } from "../engine/http-syntax";
import { HUMAN_STATES } from "../engine/tasks/human/progress";
import { HUMAN_USER_TYPES } from "../engine/tasks/human/settings";
import { booleanParam, integerParam, jacksonNumber, jsonData, requestObject } from "./schemas";

/** Most entries in one of a search's lists (states, assignees, names...). */
const MAX_SEARCH_LIST = 100;
/** Longest name, id or pattern a search names. */
const MAX_SEARCH_TEXT = 512;
/** Most tasks one page of a search shows. */
export const MAX_HUMAN_SEARCH_SIZE = 1000;

const text = v.pipe(v.string("must be a string"), v.maxLength(MAX_SEARCH_TEXT, `must be at most ${MAX_SEARCH_TEXT} characters`));
/** A list a client may also send as null (Orkes' clients send absent lists as null or []). */
const listOf = <T extends v.GenericSchema>(item: T) =>
  v.pipe(
    v.nullish(v.pipe(v.array(item, "must be an array"), v.maxLength(MAX_SEARCH_LIST, `must have at most ${MAX_SEARCH_LIST} entries`)), []),
    v.transform((list) => list ?? []),
  );
const epochMillis = v.nullish(jacksonNumber(v.pipe(v.number("must be a number (epoch milliseconds)"), v.integer("must be an integer"), v.minValue(0, "must not be negative"))));

/**
 * A user or group a search names: its id, in which `*` matches anything, and its kind; without a kind (the JavaScript
 * client leaves it out unless told), one of any kind.
 */
const SearchedUser = requestObject({
  user: v.pipe(text, v.minLength(1, "must not be empty")),
  userType: v.pipe(v.nullish(v.picklist(HUMAN_USER_TYPES, `must be one of ${HUMAN_USER_TYPES.join(", ")}`)), v.transform((type) => type ?? undefined)),
});

/** Orkes' HumanTaskSearch. */
export const HumanTaskSearchRequest = requestObject({
  searchType: v.pipe(
    v.nullish(v.picklist(["ADMIN", "INBOX"], "must be ADMIN (the tasks of the workflows you may read) or INBOX (those assigned to or claimed by you)"), "INBOX"),
    v.transform((type) => type ?? "INBOX"),
  ),
  start: v.pipe(v.nullish(jacksonNumber(v.pipe(v.number("must be a number"), v.integer("must be an integer"), v.minValue(0, "must not be negative"), v.maxValue(1_000_000, "must be at most 1000000"))), 0), v.transform((n) => n ?? 0)),
  size: v.pipe(
    v.nullish(jacksonNumber(v.pipe(v.number("must be a number"), v.integer("must be an integer"), v.minValue(0, "must not be negative"), v.maxValue(MAX_HUMAN_SEARCH_SIZE, `must be at most ${MAX_HUMAN_SEARCH_SIZE}`))), 100),
    v.transform((n) => n ?? 100),
  ),
  states: listOf(v.picklist(HUMAN_STATES, `must be one of ${HUMAN_STATES.join(", ")}`)),
  assignees: listOf(SearchedUser),
  claimants: listOf(SearchedUser),
  definitionNames: listOf(text),
  displayNames: listOf(text),
  taskRefNames: listOf(text),
  workflowIds: listOf(text),
  workflowNames: listOf(text),
  fullTextQuery: v.pipe(v.nullish(text), v.transform((value) => value ?? undefined)),
  taskInputQuery: v.pipe(v.nullish(text), v.transform((value) => value ?? undefined)),
  taskOutputQuery: v.pipe(v.nullish(text), v.transform((value) => value ?? undefined)),
  updateStartTime: v.pipe(epochMillis, v.transform((value) => value ?? undefined)),
  updateEndTime: v.pipe(epochMillis, v.transform((value) => value ?? undefined)),
});
/** A parsed {@link HumanTaskSearchRequest}. */
export type HumanTaskSearchBody = v.InferOutput<typeof HumanTaskSearchRequest>;

/** `searchType` of `GET /api/human/tasks/getTaskDisplayNames`. */
export const DisplayNamesQuery = v.object({
  searchType: v.optional(v.picklist(["ADMIN", "INBOX"], "searchType must be ADMIN or INBOX"), "INBOX"),
});

/** The query of a claim: whether to take over a task assigned to (or claimed by) someone else, and whether to add its form. */
export const ClaimQuery = v.object({ overrideAssignment: booleanParam(false), withTemplate: booleanParam(false) });
/** The query of a read. */
export const WithTemplateQuery = v.object({ withTemplate: booleanParam(false) });
/** The query of a form update: whether it submits (completes) the task. */
export const UpdateQuery = v.object({ complete: booleanParam(false) });
/** The query of an update by reference name. */
export const UpdateByRefQuery = v.object({
  workflowId: v.pipe(v.string("workflowId is required"), v.minLength(1, "workflowId must not be empty")),
  taskRefName: v.pipe(v.string("taskRefName is required"), v.minLength(1, "taskRefName must not be empty")),
  complete: booleanParam(false),
  iteration: v.optional(integerParam(0, 1_000_000)),
});
/** The query of a skip: why. */
export const SkipQuery = v.object({ reason: v.optional(v.pipe(v.string(), v.maxLength(1024, "reason must be at most 1024 characters"))) });

/** The form's fields (a JSON object): merged into the task's output. */
export const FormBody = jsonData;

/** Most task ids one bulk deletion names. */
export const MAX_BULK_HUMAN_TASKS = 100;
/** The body of the bulk deletion: task ids. */
export const HumanTaskIds = v.pipe(
  v.array(v.pipe(v.string("must be a task id"), v.minLength(1, "must not be empty"), v.maxLength(100, "must be at most 100 characters")), "must be an array of task ids"),
  v.maxLength(MAX_BULK_HUMAN_TASKS, `must name at most ${MAX_BULK_HUMAN_TASKS} tasks`),
);

/** Longest user form name. */
export const MAX_TEMPLATE_NAME_LENGTH = 255;
/**
 * A user form's name: letters, digits, spaces, `_`, `-` and `.` (it is a path segment of the template routes), so not `.`
 * or `..`, which a client's URL resolves away (`/api/human/template/../1` is `/api/human/1`): such a form could be saved
 * but never read or deleted by name.
 */
export const TemplateName = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(MAX_TEMPLATE_NAME_LENGTH, `must be at most ${MAX_TEMPLATE_NAME_LENGTH} characters`),
  v.regex(/^[A-Za-z0-9_.\- ]+$/, "must hold only letters, digits, spaces, _, - and ."),
  v.check((name) => !/^\d+$/.test(name), "must not be only digits (GET /api/human/template/{id} reads a task's form by task id)"),
  v.check((name) => !isDotSegment(name), DOT_SEGMENT_MESSAGE),
);
/** A form's tag (Orkes' HumanTaskTemplate takes a longer value than other tags, and an empty key). */
export const HumanTemplateTag = requestObject({ key: v.pipe(v.string("must be a string"), v.maxLength(256)), value: v.pipe(v.string("must be a string"), v.maxLength(1024)) });

/** Most tags a form holds. */
export const MAX_TEMPLATE_TAGS = 100;
/** The body of `PUT` and `DELETE /api/human/template/{name}/tags` (Orkes' list of tags), bounded as a form's own `tags`. */
export const HumanTemplateTagList = v.pipe(
  v.array(HumanTemplateTag, "must be an array of {key, value}"),
  v.maxLength(MAX_TEMPLATE_TAGS, `must have at most ${MAX_TEMPLATE_TAGS} tags`),
);

/** Orkes' HumanTaskTemplate (a user form) as saved: its name, JSON schema and UI layout, and optionally its version. */
export const HumanTemplateRequest = requestObject({
  name: TemplateName,
  // 0 is none, as a client's number field left unset sends it (the JavaScript HumanTaskTemplate's version is required).
  version: v.pipe(
    v.nullish(jacksonNumber(v.pipe(v.number("must be a number"), v.integer("must be an integer"), v.minValue(0, "must be at least 0"), v.maxValue(1_000_000, "must be at most 1000000")))),
    v.transform((version) => (version === 0 ? null : version)),
  ),
  jsonSchema: jsonData,
  templateUI: v.nullish(jsonData),
  tags: v.nullish(HumanTemplateTagList),
});
/** A parsed {@link HumanTemplateRequest}. */
export type HumanTemplateBody = v.InferOutput<typeof HumanTemplateRequest>;
/** Most forms one bulk save holds. */
export const MAX_BULK_TEMPLATES = 100;
/** The body of a bulk save. */
export const HumanTemplateList = v.pipe(
  v.array(HumanTemplateRequest, "must be an array of user forms"),
  v.minLength(1, "must hold at least one form"),
  v.maxLength(MAX_BULK_TEMPLATES, `must hold at most ${MAX_BULK_TEMPLATES} forms`),
);
/** The query of a save: whether a form of that name gets a new version rather than its latest being replaced. */
export const SaveTemplateQuery = v.object({ newVersion: booleanParam(false) });
/** The query of a listing: one form's versions, or one version. */
export const ListTemplatesQuery = v.object({
  name: v.optional(v.string()),
  // 0 is none: every version.
  version: v.optional(v.pipe(integerParam(0, 1_000_000), v.transform((version) => (version === 0 ? undefined : version)))),
});
