// @ts-check
import { api, ApiError, errorMessage } from "../lib/api.js";
import { openDialog } from "../lib/dialog.js";
import { copyButton, formatTime, h, replaceChildren } from "../lib/dom.js";
import { createHash } from "../lib/hash.js";
import { entityEditor } from "../lib/entity-editor.js";
import { jsonEditor, readObject } from "../lib/json-editor.js";

/**
 * @typedef {{ action: string, scope: string }} Grant
 * @typedef {{ name: string, description: string, permissions: Grant[] }} Role
 * @typedef {{ userId: string, roles: string[], directPermissions: Grant[] }} Assignment
 * @typedef {Assignment & { keys: number, groups?: string[] }} ListedUser
 * @typedef {{ id: string, name: string, createdBy?: string, createTime: number }} Application
 * A role as a user or group answers it (Orkes' Permission: `name` is the action).
 * @typedef {{ name: string, permissions: Array<{ name: string, scope: string }> }} HeldRole
 * Orkes' group as `/api/groups` answers it: its roles with what each grants.
 * @typedef {{ id: string, description: string, roles: HeldRole[] }} Group
 * @typedef {{ grantedAccess: Array<{ target: { type: string, id: string }, access: string[] }> }} GrantedAccess
 * One key as a keys panel lists it: its id, when it was made and, where keys can be stopped, whether it is active.
 * @typedef {{ id: string, createdAt: number, active?: boolean }} ListedKey
 * How a keys panel reaches the keys of one user or application.
 * @typedef {object} KeySource
 * @property {string} owner who the keys act as, in words ("user ann", "application ci")
 * @property {() => Promise<ListedKey[]>} list
 * @property {() => Promise<{ id: string, secret: string }>} create
 * @property {(id: string) => Promise<void>} revoke
 * @property {((id: string) => Promise<void>) | undefined} toggle
 */

/** The prefix of the user ids applications act as (listed under Applications, not Users). */
const APPLICATION_USER = "app:";

/** What "New role" starts from. */
const ROLE_TEMPLATE = {
  name: "workflow-operators",
  description: "Start, read and manage the workflows named orders_*",
  permissions: [
    { action: "WORKFLOW_READ", scope: "workflow:orders_*" },
    { action: "WORKFLOW_ADMIN", scope: "workflow:orders_*" },
  ],
};

/**
 * Grants in words: "WORKFLOW_READ on workflow:*, TASK_EXECUTE on task:pay", or "nothing".
 * @param {Grant[]} grants
 */
export function grantsText(grants) {
  return grants.length === 0 ? "nothing" : grants.map((grant) => `${grant.action} on ${grant.scope}`).join(", ");
}

/**
 * A table of `rows` (each a list of cells) under column `titles`, named `caption` for screen readers.
 * @param {string} caption
 * @param {string[]} titles
 * @param {Array<Array<Node | string | null>>} rows
 */
function dataTable(caption, titles, rows) {
  return h("div", { className: "table-wrap" }, h("table", {},
    h("caption", { className: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, titles.map((title) => h("th", { scope: "col" }, title)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells)))));
}

/**
 * A one-field form that creates something (a group, an application) and opens its page, with where a refusal shows.
 * @param {{ id: string, label: string, placeholder: string, maxLength: number, create: (value: string) => Promise<{ notice: string, href: string }> }} options
 * @param {import("../app.js").ViewContext} context
 * @returns {[HTMLElement, HTMLElement]} the form and its message
 */
function creationForm({ id, label, placeholder, maxLength, create }, context) {
  const field = h("input", { id, required: true, maxLength, autocomplete: "off", placeholder });
  const message = h("p", { className: "error", role: "alert" });
  const form = h("form", { className: "filters", onsubmit: async (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    message.textContent = "";
    try {
      const created = await create(/** @type {HTMLInputElement} */ (field).value);
      context.notify(created.notice);
      context.go(created.href);
    } catch (error) {
      message.textContent = errorMessage(error);
    }
  } }, h("div", { className: "field" }, h("label", { for: id }, label), field), h("button", { type: "submit" }, "Create"));
  return [form, message];
}

/**
 * The access pages' heading with the tabs between them.
 * @param {string} title
 * @param {"roles" | "users" | "groups" | "applications"} current
 * @param {HTMLElement | null} [action] a button or link beside the heading
 */
function heading(title, current, action = null) {
  const tabs = h("nav", { className: "tabs", "aria-label": "Access" }, [["roles", "Roles"], ["users", "Users"], ["groups", "Groups"], ["applications", "Applications"]].map(([id, label]) =>
    h("a", { href: `#/access/${id}`, ...(id === current ? { "aria-current": "page" } : {}) }, label)));
  return [h("div", { className: "page-head" }, h("h1", {}, title), action), tabs];
}

/**
 * Shows `render`'s page under its heading (with `action` beside it), or, when the caller may not manage access (403),
 * says so under the heading, offering nothing.
 * @param {HTMLElement} container
 * @param {import("../app.js").ViewContext} context
 * @param {{ title: string, tab: "roles" | "users" | "groups" | "applications", action?: HTMLElement }} page
 * @param {() => Promise<Array<Node | null>>} render
 */
async function accessPage(container, context, page, render) {
  /** @type {Array<Node | null>} */
  let body;
  let action = page.action ?? null;
  try {
    body = await render();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 403) throw error;
    body = [h("p", { className: "empty" }, "Managing access needs USER_ADMIN.")];
    action = null;
  }
  if (context.active()) replaceChildren(container, ...heading(page.title, page.tab, action), ...body);
}

/**
 * Every role and what it grants.
 * @type {import("../app.js").View}
 */
export async function renderRoles(container, _params, context) {
  await accessPage(container, context, { title: "Roles", tab: "roles", action: h("a", { className: "button", href: createHash("access/roles") }, "New role") }, async () => {
    const roles = /** @type {Role[]} */ (await api("GET", "/api/security/roles"));
    return [
      h("p", { className: "help" }, "A role is a named set of permissions at scopes (*, a prefix such as workflow:orders_*, or an exact one); users and applications hold roles and permissions of their own. You can hand out only what you hold."),
      dataTable("Roles", ["Name", "Grants", "Description"], roles.map((role) => [
        h("td", {}, h("a", { href: `#/access/roles/${encodeURIComponent(role.name)}` }, role.name)),
        h("td", {}, grantsText(role.permissions)),
        h("td", {}, role.description)])),
    ];
  });
}

/**
 * One role as editable JSON, or a new one.
 * @type {import("../app.js").View}
 */
export async function renderRoleEditor(container, _params, context, name) {
  const existing = name === undefined ? undefined : /** @type {Role} */ (await api("GET", `/api/security/roles/${encodeURIComponent(name)}`));
  if (!context.active()) return;
  replaceChildren(container, ...entityEditor({
    kind: "role",
    name: existing ? name : undefined,
    value: existing ?? ROLE_TEMPLATE,
    editorId: "role-text",
    listHref: "#/access/roles",
    canEdit: true,
    save: async (role) => void (existing ? await api("PUT", `/api/security/roles/${encodeURIComponent(String(name))}`, role) : await api("POST", "/api/security/roles", role)),
    remove: async () => void (await api("DELETE", `/api/security/roles/${encodeURIComponent(String(name))}`)),
    removalNote: "Users and applications holding it keep its name, which then grants nothing (defining it again gives it back to them).",
  }, context));
}

/**
 * Everyone assigned something or holding a key (applications are under their own tab), and a way to open any user.
 * @type {import("../app.js").View}
 */
export async function renderUsers(container, _params, context) {
  const userField = h("input", { id: "access-user-id", required: true, autocomplete: "off", placeholder: "ann@example.com" });
  const open = h("form", { className: "filters", onsubmit: (/** @type {SubmitEvent} */ event) => {
    event.preventDefault();
    const userId = userField.value.trim();
    if (userId !== "") context.go(`#/access/users/${encodeURIComponent(userId)}`);
  } }, h("div", { className: "field" }, h("label", { for: "access-user-id" }, "User id"), userField), h("button", { type: "submit" }, "Open"));
  await accessPage(container, context, { title: "Users", tab: "users" }, async () => {
    const users = /** @type {ListedUser[]} */ (await api("GET", "/api/security/users")).filter((user) => !user.userId.startsWith(APPLICATION_USER));
    return [
      h("p", { className: "help" }, "A user is whoever an API key, a token or your identity provider names. Open one to give roles, permissions and API keys."),
      open,
      users.length === 0
        ? h("p", { className: "empty" }, "No user has roles, permissions or keys yet.")
        : dataTable("Users", ["User", "Roles", "Groups", "Direct permissions", "API keys"], users.map((user) => [
          h("td", {}, h("a", { href: `#/access/users/${encodeURIComponent(user.userId)}` }, user.userId)),
          h("td", {}, user.roles.join(", ") || "none"),
          h("td", {}, groupLinks(user.groups ?? [])),
          h("td", {}, grantsText(user.directPermissions)),
          h("td", {}, String(user.keys))])),
    ];
  });
}

/**
 * Links to the pages of groups `ids`, or "none".
 * @param {string[]} ids
 */
function groupLinks(ids) {
  if (ids.length === 0) return "none";
  return ids.flatMap((id, index) => [index > 0 ? ", " : "", h("a", { href: `#/access/groups/${encodeURIComponent(id)}` }, id)]);
}

/**
 * One user: the groups they belong to, their roles and direct permissions (editable JSON) and their API keys.
 * @type {import("../app.js").View}
 */
export async function renderUser(container, _params, context, userId) {
  const path = `/api/security/users/${encodeURIComponent(userId)}`;
  await accessPage(container, context, { title: `User ${userId}`, tab: "users" }, async () => {
    const assignment = /** @type {Assignment & { groups?: string[] }} */ (await api("GET", path));
    return [
      h("p", {}, "Groups (whose roles they hold too; managed on each group's page): ", groupLinks(assignment.groups ?? [])),
      assignmentForm(userId, { roles: assignment.roles, directPermissions: assignment.directPermissions }, context),
      await keysPanel({
        owner: `user ${userId}`,
        list: async () => /** @type {Array<{ keyId: string, createTime: number }>} */ (await api("GET", `${path}/api-keys`)).map((key) => ({ id: key.keyId, createdAt: key.createTime })),
        create: async () => {
          const key = /** @type {{ keyId: string, keySecret: string }} */ (await api("POST", `${path}/api-keys`));
          return { id: key.keyId, secret: key.keySecret };
        },
        revoke: async (id) => void (await api("DELETE", `${path}/api-keys/${encodeURIComponent(id)}`)),
        toggle: undefined,
      }, context),
    ];
  });
}

/**
 * A user's roles and direct permissions as editable JSON; saving replaces them.
 * @param {string} userId
 * @param {{ roles: string[], directPermissions: Grant[] }} value
 * @param {import("../app.js").ViewContext} context
 */
function assignmentForm(userId, value, context) {
  const editor = jsonEditor({ id: "assignment-text", label: "Roles and direct permissions (JSON)", value, rows: 10 });
  const message = h("p", { className: "error", role: "alert" });
  const save = h("button", { type: "submit" }, "Save");
  return h("form", {
    className: "panel definition-editor",
    onsubmit: async (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      message.textContent = "";
      save.disabled = true;
      try {
        await api("PUT", `/api/security/users/${encodeURIComponent(userId)}/roles`, readObject(editor));
        context.notify(`Saved what ${userId} holds`);
      } catch (error) {
        message.textContent = errorMessage(error);
        if (error instanceof ApiError && error.validationErrors.length > 0) editor.showErrors(error.validationErrors);
      } finally {
        save.disabled = false;
      }
    },
  }, h("h2", {}, "Roles and permissions"), editor.element, message, h("div", { className: "actions" }, save));
}

/**
 * Every group (users sharing roles), and a form to add one.
 * @type {import("../app.js").View}
 */
export async function renderGroups(container, _params, context) {
  const [create, message] = creationForm({
    id: "group-id",
    label: "New group",
    placeholder: "operators",
    maxLength: 128,
    create: async (value) => {
      const id = value.trim();
      // A PUT replaces: do not empty a group that exists.
      if (/** @type {Group[]} */ (await api("GET", "/api/groups")).some((group) => group.id === id)) throw new Error(`There is a group ${id} already.`);
      await api("PUT", `/api/groups/${encodeURIComponent(id)}`, { description: "", roles: [] });
      return { notice: `Created group ${id}`, href: `#/access/groups/${encodeURIComponent(id)}` };
    },
  }, context);
  await accessPage(container, context, { title: "Groups", tab: "groups" }, async () => {
    const groups = /** @type {Group[]} */ (await api("GET", "/api/groups"));
    return [
      h("p", { className: "help" }, "A group gives its roles, and the access given to it, to every member, as if each were assigned them."),
      create,
      message,
      groups.length === 0
        ? h("p", { className: "empty" }, "No group yet.")
        : dataTable("Groups", ["Group", "Roles", "Description"], groups.map((group) => [
          h("td", {}, h("a", { href: `#/access/groups/${encodeURIComponent(group.id)}` }, group.id)),
          h("td", {}, group.roles.map((role) => role.name).join(", ") || "none"),
          h("td", {}, group.description)])),
    ];
  });
}

/**
 * One group: its roles (added and removed one at a time), its members (added by user id, removed), and deleting it.
 * @type {import("../app.js").View}
 */
export async function renderGroup(container, _params, context, id) {
  const path = `/api/groups/${encodeURIComponent(id)}`;
  const remove = h("button", { type: "button", className: "danger", onclick: () => void openDialog({
    title: `Delete group ${id}?`,
    body: [h("p", {}, "Its members lose its roles at once.")],
    confirmLabel: "Delete",
    danger: true,
    onConfirm: async () => void (await api("DELETE", path)),
  }).then((done) => {
    if (!done) return;
    context.notify(`Deleted group ${id}`);
    context.go("#/access/groups");
  }) }, "Delete…");
  await accessPage(container, context, { title: `Group ${id}`, tab: "groups", action: remove }, async () => {
    const [group, members, roles, granted] = await Promise.all([
      /** @type {Promise<Group>} */ (api("GET", path)),
      /** @type {Promise<Array<{ id: string, name: string }>>} */ (api("GET", `${path}/users`)),
      // Their names alone for the choice (the group's own come with their grants): every role with its grants is past
      // what one listing answers at a large tenant's size.
      /** @type {Promise<Array<{ name: string }>>} */ (api("GET", "/api/security/roles?short=true")),
      /** @type {Promise<GrantedAccess>} */ (api("GET", `${path}/permissions`)),
    ]);
    const held = group.roles.map((role) => role.name);
    /** @param {string[]} next */
    const saveRoles = (next) => api("PUT", path, { description: group.description, roles: next });
    return [
      rolesSection({ held, grants: grantsHeld(group.roles), roles, empty: "No role yet: its members get nothing from it.", add: (name) => saveRoles([...held, name]), remove: (name) => saveRoles(held.filter((role) => role !== name)) }, context),
      membersSection(path, members, context),
      accessSection({ type: "GROUP", id }, granted.grantedAccess, "its members", context),
    ];
  });
}

/**
 * A group's members, each with Remove, and a user id to add.
 * @param {string} path the group's API path
 * @param {Array<{ id: string, name: string }>} members
 * @param {import("../app.js").ViewContext} context
 */
function membersSection(path, members, context) {
  const message = h("p", { className: "error", role: "alert" });
  const act = changer(message, context);
  const userField = h("input", { id: "member-id", required: true, autocomplete: "off", placeholder: "ann@example.com" });
  return h("section", { className: "panel", "aria-labelledby": "group-members" },
    h("h2", { id: "group-members" }, "Members"),
    members.length === 0
      ? h("p", { className: "empty" }, "No member yet.")
      : h("ul", { className: "role-list" }, members.map((member) => h("li", {},
        h("a", { href: `#/access/users/${encodeURIComponent(member.id)}` }, member.id), member.name !== member.id ? h("span", { className: "muted" }, ` ${member.name}`) : null, " ",
        h("button", { type: "button", className: "secondary small", onclick: () => void act(() => api("DELETE", `${path}/users/${encodeURIComponent(member.id)}`), `Removed ${member.id}`) }, `Remove ${member.id}`)))),
    h("form", { className: "filters", onsubmit: (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      const userId = userField.value.trim();
      if (userId !== "") void act(() => api("POST", `${path}/users/${encodeURIComponent(userId)}`), `Added ${userId}`);
    } }, h("div", { className: "field" }, h("label", { for: "member-id" }, "User id"), userField), h("button", { type: "submit" }, "Add member")),
    message);
}

/**
 * Every application (Orkes' non-human identities: services, workers, CI jobs), and a form to add one.
 * @type {import("../app.js").View}
 */
export async function renderApplications(container, _params, context) {
  const [create, message] = creationForm({
    id: "application-name",
    label: "New application",
    placeholder: "billing-worker",
    maxLength: 255,
    create: async (name) => {
      const application = /** @type {Application} */ (await api("POST", "/api/applications", { name }));
      return { notice: `Created application ${application.name}`, href: `#/access/applications/${encodeURIComponent(application.id)}` };
    },
  }, context);
  await accessPage(container, context, { title: "Applications", tab: "applications" }, async () => {
    const applications = /** @type {Application[]} */ (await api("GET", "/api/applications"));
    return [
      h("p", { className: "help" }, "An application is an identity for a program (a service, a task worker, a CI job): it holds roles and access keys, and acts as the user app:<id>."),
      create,
      message,
      applications.length === 0
        ? h("p", { className: "empty" }, "No application yet.")
        : dataTable("Applications", ["Name", "Id", "Created"], applications.map((application) => [
          h("td", {}, h("a", { href: `#/access/applications/${encodeURIComponent(application.id)}` }, application.name)),
          h("td", { className: "mono" }, application.id),
          h("td", {}, `${formatTime(application.createTime)}${application.createdBy ? ` by ${application.createdBy}` : ""}`)])),
    ];
  });
}

/**
 * One application: its roles (added and removed one at a time), its access keys, and deleting it.
 * @type {import("../app.js").View}
 */
export async function renderApplication(container, _params, context, id) {
  const path = `/api/applications/${encodeURIComponent(id)}`;
  const remove = h("button", { type: "button", className: "danger", onclick: () => void openDialog({
    title: "Delete this application?",
    body: [h("p", {}, "Its access keys stop working at once, and every session obtained with them ends.")],
    confirmLabel: "Delete",
    danger: true,
    onConfirm: async () => void (await api("DELETE", path)),
  }).then((done) => {
    if (!done) return;
    context.notify("Deleted the application");
    context.go("#/access/applications");
  }) }, "Delete…");
  await accessPage(container, context, { title: "Application", tab: "applications", action: remove }, async () => {
    const [application, assignment, roles, granted] = await Promise.all([
      /** @type {Promise<Application>} */ (api("GET", path)),
      /** @type {Promise<Assignment>} */ (api("GET", `/api/security/users/${encodeURIComponent(APPLICATION_USER + id)}`)),
      // Every role's name alone for the choice, as the group's page reads them; its own roles' grants read one by one.
      /** @type {Promise<Array<{ name: string }>>} */ (api("GET", "/api/security/roles?short=true")),
      /** @type {Promise<GrantedAccess>} */ (api("GET", `/api/users/${encodeURIComponent(APPLICATION_USER + id)}/permissions`)),
    ]);
    const heldRoles = await Promise.all(assignment.roles.map((name) => /** @type {Promise<Role>} */ (api("GET", `/api/security/roles/${encodeURIComponent(name)}`))));
    return [
      h("div", { className: "facts" },
        h("div", { className: "fact" }, h("span", { className: "muted" }, "Name "), application.name),
        h("div", { className: "fact" }, h("span", { className: "muted" }, "Acts as "), h("span", { className: "mono" }, APPLICATION_USER + id))),
      rolesSection({
        held: assignment.roles,
        grants: new Map(heldRoles.map((role) => [role.name, role.permissions])),
        roles,
        empty: "No role yet: its keys can sign in and do nothing.",
        add: (name) => api("POST", `${path}/roles/${encodeURIComponent(name)}`),
        remove: (name) => api("DELETE", `${path}/roles/${encodeURIComponent(name)}`),
        // Those on single definitions are listed under "Access to definitions".
        ...(otherDirect(assignment).length > 0 ? { note: `Also holds directly: ${grantsText(otherDirect(assignment))}.` } : {}),
      }, context),
      accessSection({ type: "USER", id: APPLICATION_USER + id }, granted.grantedAccess, "its keys", context),
      await keysPanel({
        owner: `application ${application.name}`,
        list: async () => /** @type {Array<{ id: string, createdAt: number, status: string }>} */ (await api("GET", `${path}/accessKeys`)).map((key) => ({ id: key.id, createdAt: key.createdAt, active: key.status === "ACTIVE" })),
        create: async () => /** @type {{ id: string, secret: string }} */ (await api("POST", `${path}/accessKeys`)),
        revoke: async (keyId) => void (await api("DELETE", `${path}/accessKeys/${encodeURIComponent(keyId)}`)),
        toggle: async (keyId) => void (await api("POST", `${path}/accessKeys/${encodeURIComponent(keyId)}/status`)),
      }, context),
    ];
  });
}

/**
 * Runs a change of the page's subject and shows the page again, or says why the change was refused.
 * @param {HTMLElement} message where a refusal is shown
 * @param {import("../app.js").ViewContext} context
 * @returns {(change: () => Promise<unknown>, done: string) => Promise<void>}
 */
function changer(message, context) {
  return async (change, done) => {
    message.textContent = "";
    try {
      await change();
      context.notify(done);
      context.go(location.hash);
    } catch (error) {
      message.textContent = errorMessage(error);
    }
  };
}

/**
 * The grants of each role of `roles` (as a user or group answers them), by name.
 * @param {HeldRole[]} roles
 * @returns {Map<string, Grant[]>}
 */
function grantsHeld(roles) {
  return new Map(roles.map((role) => [role.name, role.permissions.map((permission) => ({ action: permission.name, scope: permission.scope }))]));
}

/**
 * The roles something holds (an application, a group), each with Remove and its grants (`grants`, by name), and a
 * choice of the others (`roles`, every role's name) to add.
 * @param {{ held: string[], grants: Map<string, Grant[]>, roles: Array<{ name: string }>, empty: string, add: (name: string) => Promise<unknown>, remove: (name: string) => Promise<unknown>, note?: string }} options
 * @param {import("../app.js").ViewContext} context
 */
function rolesSection({ held, grants, roles, empty, add, remove, note }, context) {
  const message = h("p", { className: "error", role: "alert" });
  const act = changer(message, context);
  const others = roles.filter((role) => !held.includes(role.name));
  const choice = h("select", { id: "held-role" }, others.map((role) => h("option", { value: role.name }, role.name)));
  return h("section", { className: "panel", "aria-labelledby": "held-roles" },
    h("h2", { id: "held-roles" }, "Roles"),
    held.length === 0
      ? h("p", { className: "empty" }, empty)
      : h("ul", { className: "role-list" }, held.map((name) => h("li", {},
        h("span", { className: "tag" }, name), " ",
        h("span", { className: "muted" }, grantsText(grants.get(name) ?? [])), " ",
        h("button", { type: "button", className: "secondary small", onclick: () => void act(() => remove(name), `Removed role ${name}`) }, `Remove ${name}`)))),
    note ? h("p", { className: "help" }, note) : null,
    others.length === 0 ? null : h("form", { className: "filters", onsubmit: (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      const name = /** @type {HTMLSelectElement} */ (choice).value;
      void act(() => add(name), `Added role ${name}`);
    } }, h("div", { className: "field" }, h("label", { for: "held-role" }, "Role"), choice), h("button", { type: "submit" }, "Add role")),
    message);
}

/**
 * The direct permissions of `assignment` other than those on one workflow or task definition (`workflow:<name>`,
 * `task:<name>`), which the access section shows.
 * @param {Assignment} assignment
 */
function otherDirect(assignment) {
  return assignment.directPermissions.filter((grant) => !/^(workflow|task|secret|tag):[^*]+$/.test(grant.scope));
}

/** Orkes' names of the access kinds this page gives, with what each means here. */
const ACCESS_KINDS = [["READ", "Read (a secret: use it in definitions)"], ["EXECUTE", "Execute (start and manage runs, or run its tasks)"], ["UPDATE", "Write (create, update, delete; not a secret's)"]];

/**
 * What each target type the page gives access to is called.
 * @type {Record<string, string>}
 */
const TARGET_WORDS = { WORKFLOW_DEF: "workflow", TASK_DEF: "task", SECRET_NAME: "secret", TAG: "tag" };

/**
 * What a group or an application was given on single workflow and task definitions (Orkes' per-resource grants,
 * `/api/auth/authorization`), each with Remove, and a form to give more.
 * @param {{ type: "USER" | "GROUP", id: string }} subject
 * @param {GrantedAccess["grantedAccess"]} granted
 * @param {string} holders who acts with it ("its members", "its keys")
 * @param {import("../app.js").ViewContext} context
 */
function accessSection(subject, granted, holders, context) {
  const message = h("p", { className: "error", role: "alert" });
  const act = changer(message, context);
  const type = h("select", { id: "access-type" }, Object.entries(TARGET_WORDS).map(([value, word]) => h("option", { value }, `${word[0]?.toUpperCase()}${word.slice(1)}`)));
  const name = h("input", { id: "access-name", required: true, autocomplete: "off", placeholder: "orders" });
  const boxes = ACCESS_KINDS.map(([kind, label]) => {
    const box = h("input", { type: "checkbox", id: `access-${kind}`, value: kind });
    return h("span", { className: "check" }, box, " ", h("label", { for: `access-${kind}` }, label));
  });
  /** @param {{ type: string, id: string }} target */
  const described = (target) => `${TARGET_WORDS[target.type] ?? "task"} ${target.id}`;
  return h("section", { className: "panel", "aria-labelledby": "granted-access" },
    h("h2", { id: "granted-access" }, "Access to definitions and secrets"),
    granted.length === 0
      ? h("p", { className: "empty" }, `None given here: ${holders} have what its roles give.`)
      : h("ul", { className: "role-list" }, granted.map((entry) => h("li", {},
        h("span", { className: "tag" }, described(entry.target)), " ", h("span", { className: "muted" }, entry.access.join(", ")), " ",
        h("button", { type: "button", className: "secondary small", onclick: () => void act(() => api("DELETE", "/api/auth/authorization", { subject, target: entry.target, access: entry.access }), `Removed access to ${described(entry.target)}`) }, `Remove access to ${described(entry.target)}`)))),
    h("form", { className: "filters", onsubmit: (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      const access = boxes.map((box) => /** @type {HTMLInputElement} */ (box.querySelector("input"))).filter((box) => box.checked).map((box) => box.value);
      if (access.length === 0) {
        message.textContent = "Choose at least one kind of access.";
        return;
      }
      const target = { type: /** @type {HTMLSelectElement} */ (type).value, id: /** @type {HTMLInputElement} */ (name).value.trim() };
      void act(() => api("POST", "/api/auth/authorization", { subject, target, access }), `Gave access to ${described(target)}`);
    } },
      h("div", { className: "field" }, h("label", { for: "access-type" }, "Definition or secret"), type),
      h("div", { className: "field" }, h("label", { for: "access-name" }, "Name"), name),
      h("fieldset", { className: "field" }, h("legend", {}, "Access"), boxes),
      h("button", { type: "submit" }, "Give access")),
    message);
}

/**
 * The keys of a user or an application: when each was made and, for an application's, whether it is active; a new key's
 * secret is shown once, right after it is made.
 * @param {KeySource} source
 * @param {import("../app.js").ViewContext} context
 */
async function keysPanel(source, context) {
  const revealed = h("div", { role: "status", "aria-live": "polite" });
  const list = h("div");
  const message = h("p", { className: "error", role: "alert" });
  /** @param {() => Promise<void>} action */
  const act = async (action) => {
    message.textContent = "";
    try {
      await action();
      await load();
    } catch (error) {
      message.textContent = errorMessage(error);
    }
  };
  const create = h("button", { type: "button", onclick: () => void act(async () => {
    const key = await source.create();
    const credential = `${key.id}:${key.secret}`;
    replaceChildren(revealed, h("div", { className: "warning" },
      h("p", {}, "Copy the key now: its secret is not shown again. Send it as X-API-Key, or exchange it for a token at POST /api/token as {keyId, keySecret}."),
      h("code", { className: "secret-key" }, credential), " ", copyButton(credential)));
    context.notify(`Created a key for ${source.owner}`);
  }) }, "Create key");
  async function load() {
    const keys = await source.list();
    if (!context.active()) return;
    replaceChildren(list, keys.length === 0 ? h("p", { className: "empty" }, "No key yet.") : dataTable(`Keys of ${source.owner}`, ["Key id", "Created", ...(source.toggle ? ["Status"] : []), "Actions"], keys.map((key) => [
        h("td", { className: "mono" }, key.id),
        h("td", {}, formatTime(key.createdAt)),
        source.toggle ? h("td", {}, key.active ? "active" : "inactive") : null,
        h("td", { className: "actions" },
          source.toggle ? h("button", { type: "button", className: "secondary small", onclick: () => void act(() => /** @type {NonNullable<KeySource["toggle"]>} */ (source.toggle)(key.id)) }, key.active ? "Deactivate" : "Activate") : null,
          h("button", { type: "button", className: "danger small", onclick: () => void openDialog({
            title: `Revoke key ${key.id}?`,
            body: [h("p", {}, "It stops working at once, and every session obtained with it ends.")],
            confirmLabel: "Revoke",
            danger: true,
            onConfirm: () => source.revoke(key.id),
          }).then((done) => (done ? load() : undefined)) }, "Revoke…"))])));
  }
  await load();
  return h("section", { className: "panel", "aria-labelledby": "access-keys" },
    h("div", { className: "page-head" }, h("h2", { id: "access-keys" }, "Keys"), create), revealed, message, list);
}
