// @ts-check
import { api, ApiError, permissionsAt, errorMessage } from "../lib/api.js";
import { openDialog } from "../lib/dialog.js";
import { fact, formatTime, h, replaceChildren, statusBadge } from "../lib/dom.js";
import { createHash } from "../lib/hash.js";
import { jsonEditor, readObject } from "../lib/json-editor.js";

/**
 * Orkes' WorkflowSchedule, as the scheduler API answers it.
 * @typedef {{ executionId: string, scheduleName: string, scheduledTime: number, executionTime: number, zoneId: string,
 *   state: "EXECUTED" | "FAILED", workflowId?: string, reason?: string }} FireRecordJson
 * @typedef {{ name: string, cronExpression: string, zoneId: string,
 *   startWorkflowRequest: { name: string, version?: number, input?: Record<string, unknown> },
 *   paused: boolean, pausedReason?: string, runCatchupScheduleInstances: boolean,
 *   scheduleStartTime?: number, scheduleEndTime?: number, description?: string,
 *   createTime: number, updatedTime: number, createdBy: string, updatedBy: string, nextRunTime?: number }} Schedule
 */

/** How many fires the preview lists: the most nextFewSchedules answers. */
const PREVIEW_FIRES = 5;

/** What "New schedule" starts from: every hour on the hour in UTC, starting the latest version of a workflow to name. */
const TEMPLATE = {
  name: "my_schedule",
  description: "",
  cronExpression: "0 0 * * * ?",
  zoneId: "UTC",
  startWorkflowRequest: { name: "my_workflow", input: {} },
  paused: false,
  runCatchupScheduleInstances: false,
};

/** @param {string} name */
const schedulePath = (name) => `#/schedules/${encodeURIComponent(name)}`;

/**
 * "paused" or "active", as the state badge shows it.
 * @param {{ paused?: boolean }} schedule
 */
export function scheduleState(schedule) {
  return schedule.paused ? "paused" : "active";
}

/**
 * The workflow a schedule starts: its name and version, or "latest version" when it names none (each fire then starts
 * the latest registered).
 * @param {{ name: string, version?: number }} start
 */
export function workflowText(start) {
  return start.version === undefined ? `${start.name} (latest version)` : `${start.name} v${start.version}`;
}

/**
 * Minutes east of UTC of a fixed-offset zone id as a schedule takes it (Java's `ZoneId.of` forms: `Z`, `UT`, `+02:00`,
 * `-0530`, `UTC+2`, `GMT+05:30`), or undefined for any other id (an IANA one). Browsers take none of these as a time
 * zone but `+02:00`, and that only in recent versions.
 * @param {string} zoneId
 */
export function fixedOffsetMinutes(zoneId) {
  if (zoneId === "Z" || zoneId === "UT") return 0;
  const match = /^(?:UTC|GMT|UT)?([+-])(\d\d?)(?::?(\d\d))?(?::?(\d\d))?$/.exec(zoneId);
  if (match === null) return undefined;
  return (match[1] === "-" ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3] ?? 0));
}

/**
 * Epoch milliseconds as the clock of `zoneId` shows them: "YYYY-MM-DD HH:MM:SS".
 * @param {number} ms
 * @param {string} zoneId an IANA time zone id, or a fixed offset (see {@link fixedOffsetMinutes})
 */
export function formatInZone(ms, zoneId) {
  const offset = fixedOffsetMinutes(zoneId);
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: offset === undefined ? zoneId : "UTC", hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
  });
  /** @type {Record<string, string>} */
  const parts = {};
  for (const part of format.formatToParts(offset === undefined ? ms : ms + offset * 60_000)) parts[part.type] = part.value;
  return `${parts["year"]}-${parts["month"]}-${parts["day"]} ${parts["hour"]}:${parts["minute"]}:${parts["second"]}`;
}

/**
 * A fire's time in the schedule's zone (its cron expression is read there), followed by the browser's own time when
 * that clock shows another.
 * @param {number} ms
 * @param {string} zoneId the schedule's zone
 * @param {string} [localZone] the browser's zone
 */
export function fireTimeText(ms, zoneId, localZone = Intl.DateTimeFormat().resolvedOptions().timeZone) {
  const there = formatInZone(ms, zoneId);
  const here = formatInZone(ms, localZone);
  return here === there ? `${there} ${zoneId}` : `${there} ${zoneId} (${here} local)`;
}

/**
 * When a listed schedule fires next: none while it is paused, nor once its window has ended (the API then gives no
 * `nextRunTime`).
 * @param {{ paused?: boolean, zoneId: string, nextRunTime?: number }} schedule
 * @param {string} [localZone] the browser's zone
 */
export function nextFireText(schedule, localZone) {
  if (schedule.paused) return "none while paused";
  if (schedule.nextRunTime === undefined) return "none: its end time has passed";
  return fireTimeText(schedule.nextRunTime, schedule.zoneId, localZone);
}

/**
 * The query of `GET /api/scheduler/nextFewSchedules` for a schedule as written (saved, or being edited): its cron
 * expression, zone and window, read as a save reads them (no zone is UTC; a bound of 0 or null is none). A value of
 * the wrong type is passed on as text, so the service says what is wrong with it.
 * @param {Record<string, unknown>} schedule
 * @param {number} [limit]
 */
export function nextFiresQuery(schedule, limit = PREVIEW_FIRES) {
  const text = (/** @type {unknown} */ value) => (typeof value === "string" ? value : JSON.stringify(value));
  const { cronExpression, zoneId } = schedule;
  const query = new URLSearchParams({ cronExpression: cronExpression === undefined || cronExpression === null ? "" : text(cronExpression) });
  query.set("zoneId", zoneId === undefined || zoneId === null ? "UTC" : text(zoneId));
  for (const bound of ["scheduleStartTime", "scheduleEndTime"]) {
    const value = schedule[bound];
    if (value !== undefined && value !== null && value !== 0) query.set(bound, text(value));
  }
  query.set("limit", String(limit));
  return query.toString();
}

/**
 * A refusal as one line: the service's message and each field it names.
 * @param {unknown} error
 */
function problemText(error) {
  if (!(error instanceof Error)) return String(error);
  if (!(error instanceof ApiError) || error.validationErrors.length === 0) return error.message;
  return `${error.message}: ${error.validationErrors.map(({ path, message }) => `${path || "(whole query)"} ${message}`).join("; ")}`;
}

/**
 * Whether the caller may save, pause, resume or delete schedules of some workflow among `schedules`: the service asks
 * for the right to start the workflow a schedule starts.
 * @param {Schedule[]} schedules
 */
async function mayManageSome(schedules) {
  const names = new Set(schedules.map((schedule) => schedule.startWorkflowRequest.name));
  const held = await Promise.all([...names].map((workflowName) => permissionsAt(`workflow:${workflowName}`)));
  return held.some((permissions) => permissions.has("WORKFLOW_ADMIN"));
}

/**
 * Every schedule the caller may read: its workflow, cron expression and zone, whether it is paused and when it fires
 * next. "New schedule" is offered to whoever may start every workflow, or the workflow of a listed schedule: a
 * schedule needs the right to start the workflow it names, unknown until it is written.
 * @type {import("../app.js").View}
 */
export async function renderSchedules(container, _params, context) {
  const filter = h("input", { id: "schedule-filter", type: "search", placeholder: "name contains…" });
  const list = h("div", { className: "results", "aria-live": "polite" });
  const [schedules, permissions] = await Promise.all([/** @type {Promise<Schedule[]>} */ (api("GET", "/api/scheduler/schedules")), permissionsAt("*")]);
  const canCreate = permissions.has("WORKFLOW_ADMIN") || (await mayManageSome(schedules));
  if (!context.active()) return;
  replaceChildren(container,
    h("div", { className: "page-head" }, h("h1", {}, "Schedules"), canCreate ? h("a", { className: "button", href: createHash("schedules") }, "New schedule") : null),
    h("p", { className: "help" }, "Each schedule starts its workflow at the times of its cron expression, read in its time zone."),
    h("div", { className: "filters" }, h("div", { className: "field" }, h("label", { for: "schedule-filter" }, "Filter"), filter)),
    list);

  function render() {
    const needle = filter.value.trim().toLowerCase();
    const shown = schedules.filter((schedule) => schedule.name.toLowerCase().includes(needle));
    if (shown.length === 0) {
      replaceChildren(list, h("p", { className: "empty" }, schedules.length === 0 ? "No schedule yet." : "No schedule matches."));
      return;
    }
    replaceChildren(list, h("div", { className: "table-wrap" }, h("table", {},
      h("caption", { className: "visually-hidden" }, "Schedules"),
      h("thead", {}, h("tr", {}, ["Name", "Workflow", "Cron expression", "State", "Next fire", "Description"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, shown.map((schedule) => h("tr", {},
        h("td", {}, h("a", { href: schedulePath(schedule.name) }, schedule.name)),
        h("td", {}, workflowText(schedule.startWorkflowRequest)),
        h("td", {}, h("code", {}, schedule.cronExpression), " ", h("span", { className: "muted" }, schedule.zoneId)),
        h("td", {}, stateBadge(schedule)),
        h("td", {}, nextFireText(schedule)),
        h("td", {}, schedule.description ?? "")))))));
  }
  filter.addEventListener("input", render);
  render();
}

/** @param {{ paused?: boolean }} schedule */
function stateBadge(schedule) {
  return statusBadge(scheduleState(schedule).toUpperCase());
}


/**
 * One schedule as editable JSON (read-only without the right to start its workflow), or a new one; its state, Pause or
 * Resume, Delete…, and a preview of its next fires. Saving creates or replaces it; the service's validation errors
 * are marked at their lines. A new schedule's right depends on the workflow it will name, so its save is offered and
 * the service decides.
 * @type {import("../app.js").View}
 */
export async function renderScheduleEditor(container, _params, context, name) {
  const path = name === undefined ? "" : `/api/scheduler/schedules/${encodeURIComponent(name)}`;
  const existing = name === undefined ? undefined : /** @type {Schedule} */ (await api("GET", path));
  const canManage = existing === undefined || (await permissionsAt(`workflow:${existing.startWorkflowRequest.name}`)).has("WORKFLOW_ADMIN");
  if (!context.active()) return;
  /** What the editor was last filled with: a pause or resume refills an editor left as it was. */
  let shown = /** @type {Record<string, unknown>} */ (existing ?? TEMPLATE);
  const editor = jsonEditor({ id: "schedule-text", label: "Schedule (JSON)", value: shown, rows: 20, readOnly: !canManage });
  const message = h("p", { className: "error", role: "alert" });
  const save = h("button", { type: "submit" }, existing ? "Save" : "Create");
  const facts = h("dl", { className: "facts" });
  const pauseOrResume = existing && canManage ? h("button", { type: "button", className: "secondary", onclick: () => void togglePaused() }) : null;
  let paused = existing?.paused ?? false;
  const remove = existing && canManage ? h("button", { type: "button", className: "danger", onclick: () => confirmRemoval(existing.name, context) }, "Delete…") : null;

  /** @param {Schedule} schedule */
  function showState(schedule) {
    replaceChildren(facts,
      fact("State", stateBadge(schedule), schedule.pausedReason ? ` ${schedule.pausedReason}` : null),
      fact("Workflow", workflowText(schedule.startWorkflowRequest)),
      fact("Cron expression", h("code", {}, schedule.cronExpression), ` in ${schedule.zoneId}`),
      fact("Next fire", nextFireText(schedule)),
      fact("Updated", `${formatTime(schedule.updatedTime)} by ${schedule.updatedBy}`));
    paused = schedule.paused;
    if (pauseOrResume) pauseOrResume.textContent = paused ? "Resume" : "Pause";
  }

  async function togglePaused() {
    if (!existing || !pauseOrResume) return;
    const pausing = !paused;
    pauseOrResume.disabled = true;
    try {
      await api("PUT", `${path}/${pausing ? "pause" : "resume"}`);
      const fresh = /** @type {Schedule} */ (await api("GET", path));
      if (!context.active()) return;
      showState(fresh);
      keepPausedInEditor(fresh);
      context.notify(`${pausing ? "Paused" : "Resumed"} schedule ${fresh.name}`);
    } catch (error) {
      if (context.active()) context.notify(problemText(error), "error");
    } finally {
      pauseOrResume.disabled = false;
    }
  }

  /**
   * A later Save must not undo the pause or resume: an editor left as it was shows the schedule as it is now; one being
   * edited keeps its edits with `paused` set (broken JSON stays as typed).
   * @param {Schedule} fresh
   */
  function keepPausedInEditor(fresh) {
    /** @type {unknown} */
    let edited;
    try {
      edited = editor.read();
    } catch {
      return;
    }
    if (edited === null || typeof edited !== "object" || Array.isArray(edited)) return;
    const untouched = JSON.stringify(edited) === JSON.stringify(shown);
    const next = untouched ? fresh : { ...edited, paused: fresh.paused };
    editor.write(next);
    shown = untouched ? fresh : shown;
  }

  const fires = h("ol", { className: "fires", "aria-labelledby": "schedule-fires" });
  const firesNote = h("p", { className: "help" });
  const firesError = h("p", { className: "error", role: "alert" });
  /** @param {Record<string, unknown>} schedule */
  async function showFires(schedule) {
    firesError.textContent = "";
    const zoneId = typeof schedule["zoneId"] === "string" && schedule["zoneId"] !== "" ? schedule["zoneId"] : "UTC";
    try {
      const times = /** @type {number[]} */ (await api("GET", `/api/scheduler/nextFewSchedules?${nextFiresQuery(schedule)}`));
      if (!context.active()) return;
      firesNote.textContent = `For ${String(schedule["cronExpression"])} in ${zoneId}${schedule["paused"] === true ? "; paused, it fires none of them until it is resumed" : ""}.`;
      replaceChildren(fires, times.length === 0
        ? h("li", { className: "empty" }, "None: its end time has passed.")
        : times.map((ms) => h("li", {}, h("time", { datetime: new Date(ms).toISOString() }, fireTimeText(ms, zoneId)))));
    } catch (error) {
      if (!context.active()) return;
      firesNote.textContent = "";
      replaceChildren(fires);
      firesError.textContent = problemText(error);
    }
  }
  const preview = canManage ? h("button", {
    type: "button",
    className: "secondary",
    onclick: () => {
      firesError.textContent = "";
      try {
        void showFires(readObject(editor));
      } catch (error) {
        firesError.textContent = errorMessage(error);
      }
    },
  }, "Preview the edited schedule") : null;

  const form = h("form", {
    className: "definition-editor",
    onsubmit: async (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      message.textContent = "";
      /** @type {Record<string, unknown>} */
      let schedule;
      try {
        schedule = readObject(editor);
      } catch (error) {
        message.textContent = errorMessage(error);
        return;
      }
      if (existing && schedule["name"] !== existing.name) {
        // Saving under another name would create a second schedule and leave this one firing.
        message.textContent = `The name is ${JSON.stringify(existing.name)}: create a new schedule to use another name.`;
        return;
      }
      save.disabled = true;
      try {
        // The service replaces a schedule of the same name (Orkes upserts): a new one must not overwrite another.
        if (!existing && (/** @type {Schedule[]} */ (await api("GET", "/api/scheduler/schedules"))).some((other) => other.name === schedule["name"])) {
          message.textContent = `A schedule named ${JSON.stringify(schedule["name"])} exists already: open it to change it, or choose another name.`;
          return;
        }
        const saved = /** @type {Schedule} */ (await api("POST", "/api/scheduler/schedules", schedule));
        context.notify(`Saved schedule ${saved.name}`);
        context.go(schedulePath(saved.name));
      } catch (error) {
        message.textContent = errorMessage(error);
        if (error instanceof ApiError && error.validationErrors.length > 0) editor.showErrors(error.validationErrors);
      } finally {
        save.disabled = false;
      }
    },
  },
    h("p", { className: "help" },
      "A Spring cron expression: six fields, seconds first (", h("code", {}, "0 0 * * * ?"), " is every hour on the hour), read in ",
      h("code", {}, "zoneId"), " (an IANA time zone, or a fixed offset such as ", h("code", {}, "+02:00"), " or ", h("code", {}, "UTC+2"), "). ", h("code", {}, "startWorkflowRequest"), " names a registered workflow (its latest version unless ",
      h("code", {}, "version"), " is given) and its input. ", h("code", {}, "scheduleStartTime"), " and ", h("code", {}, "scheduleEndTime"),
      " (epoch milliseconds) bound when it fires."),
    editor.element,
    message,
    h("div", { className: "actions" }, canManage ? save : null, h("a", { className: "button secondary", href: "#/schedules" }, canManage ? "Cancel" : "Back")));

  if (existing) showState(existing);
  const history = existing ? await recentFires(existing) : null;
  if (!context.active()) return;
  replaceChildren(container,
    h("div", { className: "page-head" },
      h("h1", {}, existing ? `Schedule ${existing.name}` : "New schedule"),
      h("div", { className: "actions" }, pauseOrResume, remove)),
    existing ? facts : null,
    form,
    h("section", { className: "panel", "aria-labelledby": "schedule-fires" },
      h("h2", { id: "schedule-fires" }, "Next fires"),
      firesNote, fires, firesError, preview),
    history);
  await showFires(shown);
}

/** How many of a schedule's past fires its page shows. */
const RECENT_FIRES = 10;

/**
 * The latest fires of `schedule`: when each ran, and the execution it started or why none started.
 * @param {Schedule} schedule
 * @returns {Promise<HTMLElement>}
 */
async function recentFires(schedule) {
  const query = encodeURIComponent(`scheduleName = '${schedule.name}'`);
  const found = /** @type {{ totalHits: number, results: FireRecordJson[] }} */ (
    await api("GET", `/api/scheduler/search/executions?query=${query}&sort=scheduledTime:DESC&size=${RECENT_FIRES}`)
  );
  const body = found.results.length === 0
    ? h("p", { className: "empty" }, "It has not fired yet.")
    : h("div", { className: "table-wrap" }, h("table", { "aria-labelledby": "schedule-history" },
      h("thead", {}, h("tr", {}, ["Fire", "Ran", "Outcome"].map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, found.results.map((fire) => h("tr", {},
        h("td", {}, h("time", { datetime: new Date(fire.scheduledTime).toISOString() }, fireTimeText(fire.scheduledTime, fire.zoneId))),
        h("td", {}, formatTime(fire.executionTime)),
        h("td", {}, fire.workflowId !== undefined
          ? [h("span", { className: "badge status-COMPLETED" }, "started"), " ", h("a", { href: `#/executions/${encodeURIComponent(fire.workflowId)}` }, fire.workflowId)]
          : [h("span", { className: "badge status-FAILED" }, "not started"), " ", fire.reason ?? ""]))))));
  const more = found.totalHits > found.results.length ? h("p", { className: "help" }, `The latest ${found.results.length} of ${found.totalHits} recorded fires.`) : null;
  return h("section", { className: "panel", "aria-labelledby": "schedule-history" }, h("h2", { id: "schedule-history" }, "Recent fires"), body, more);
}

/**
 * @param {string} name
 * @param {import("../app.js").ViewContext} context
 */
function confirmRemoval(name, context) {
  void openDialog({
    title: `Delete schedule ${name}?`,
    body: [h("p", {}, "It stops firing for good. The executions it started are kept.")],
    confirmLabel: "Delete",
    danger: true,
    onConfirm: async () => {
      await api("DELETE", `/api/scheduler/schedules/${encodeURIComponent(name)}`);
    },
  }).then((done) => {
    if (!done) return;
    context.notify(`Deleted schedule ${name}`);
    context.go("#/schedules");
  });
}
