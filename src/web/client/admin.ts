/** The admin page: users, API keys with quotas and rate limits, counts usage per key and month, audit log. */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { ApiError, StreetflowApi } from "./api.js";
import { byId, el, messageOf, setStatus } from "./ui.js";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

interface User {
  email: string;
  role: string;
  disabled: boolean;
  has_password: boolean;
}
interface Key {
  id: string;
  prefix: string;
  label: string | null;
  revoked: boolean;
  quota_units: number | null;
  rate_limit_per_minute: number | null;
}
interface Usage {
  key_id: string;
  month: string;
  calls: number;
  units: number;
}
interface AuditEntry {
  at: string;
  actor: string;
  action: string;
  target: string | null;
}

const ROLES = ["viewer", "analyst", "admin"];
const status = byId<HTMLElement>("admin-status");
let api: StreetflowApi;
let me = "";
let chart: Chart | null = null;

const call = <T>(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown) =>
  api.request<T>(method, `/admin/api${path}`, body);

/** Runs an action, reporting its failure (or success text) in a status line, then redraws. */
async function act(line: HTMLElement, action: () => Promise<string | void>): Promise<void> {
  setStatus(line, "Saving…", "loading");
  try {
    setStatus(line, (await action()) ?? "Saved.");
    await refresh();
  } catch (err) {
    setStatus(line, messageOf(err), "error");
  }
}

function showLink(text: string): void {
  const box = byId<HTMLElement>("user-link");
  box.hidden = false;
  box.textContent = text;
}

function userRow(user: User): HTMLTableRowElement {
  const line = byId<HTMLElement>("user-status");
  const self = user.email.toLowerCase() === me.toLowerCase();
  const role = el(
    "select",
    { disabled: self, attrs: { "aria-label": `Role of ${user.email}` } },
    ...ROLES.map((r) => el("option", { value: r, selected: r === user.role }, r)),
  );
  role.addEventListener("change", () =>
    act(line, async () => {
      await call("PATCH", `/users/${encodeURIComponent(user.email)}`, { role: role.value });
      return `${user.email} is now ${role.value}.`;
    }),
  );
  const toggle = el("button", { type: "button", disabled: self }, user.disabled ? "Enable" : "Disable");
  toggle.setAttribute("aria-label", `${user.disabled ? "Enable" : "Disable"} ${user.email}`);
  toggle.addEventListener("click", () =>
    act(line, async () => {
      await call("PATCH", `/users/${encodeURIComponent(user.email)}`, { disabled: !user.disabled });
    }),
  );
  const reset = el("button", { type: "button" }, "Reset link");
  reset.setAttribute("aria-label", `Reset link for ${user.email}`);
  reset.addEventListener("click", () =>
    act(line, async () => {
      const { reset_link } = await call<{ reset_link: string }>(
        "POST",
        `/users/${encodeURIComponent(user.email)}/reset-link`,
      );
      showLink(reset_link);
      return `One-time link for ${user.email} (valid 24 hours): pass it on.`;
    }),
  );
  const state = user.disabled ? "disabled" : user.has_password ? "active" : "invited";
  return el(
    "tr",
    {},
    el("td", {}, user.email),
    el("td", {}, role),
    el("td", {}, state),
    el("td", {}, toggle, " ", reset),
  );
}

const limitValue = (input: HTMLInputElement) => (input.value.trim() === "" ? null : Number(input.value));

function keyRow(key: Key): HTMLTableRowElement {
  const line = byId<HTMLElement>("key-status");
  const name = key.label ?? key.prefix;
  const input = (value: number | null, label: string) =>
    el("input", {
      type: "number",
      min: "1",
      value: value === null ? "" : String(value),
      placeholder: "default",
      disabled: key.revoked,
      attrs: { "aria-label": `${label} of ${name}` },
    });
  const label = el("input", {
    type: "text",
    value: key.label ?? "",
    disabled: key.revoked,
    attrs: { "aria-label": `Label of ${key.prefix}` },
  });
  const quota = input(key.quota_units, "Monthly quota");
  const rate = input(key.rate_limit_per_minute, "Rate limit");
  const save = el(
    "button",
    { type: "button", disabled: key.revoked, attrs: { "aria-label": `Save ${name}` } },
    "Save",
  );
  save.addEventListener("click", () =>
    act(line, async () => {
      await call("PATCH", `/keys/${key.id}`, {
        label: label.value.trim() || null,
        quota_units: limitValue(quota),
        rate_limit_per_minute: limitValue(rate),
      });
      return `${name} saved.`;
    }),
  );
  const revoke = el(
    "button",
    { type: "button", disabled: key.revoked, attrs: { "aria-label": `Revoke ${name}` } },
    key.revoked ? "Revoked" : "Revoke",
  );
  revoke.addEventListener("click", () => {
    if (confirm(`Revoke ${name}? Programs using it stop working at once.`))
      void act(line, async () => {
        await call("DELETE", `/keys/${key.id}`);
        return `${name} revoked.`;
      });
  });
  return el(
    "tr",
    {},
    el("td", {}, el("code", {}, `${key.prefix}…`)),
    el("td", {}, label),
    el("td", {}, quota),
    el("td", {}, rate),
    el("td", {}, save, " ", revoke),
  );
}

function drawUsage(usage: Usage[], keys: Key[]): void {
  const nameOf = (id: string) => {
    const k = keys.find((key) => key.id === id);
    return k ? (k.label ?? k.prefix) : id;
  };
  byId<HTMLElement>("usage-rows").replaceChildren(
    ...usage.map((u) =>
      el(
        "tr",
        {},
        el("td", {}, u.month),
        el("td", {}, nameOf(u.key_id)),
        el("td", {}, u.calls.toLocaleString("en")),
        el("td", {}, u.units.toLocaleString("en")),
      ),
    ),
  );
  const months = [...new Set(usage.map((u) => u.month))].sort();
  const keyIds = [...new Set(usage.map((u) => u.key_id))];
  const datasets = keyIds.map((id) => ({
    label: nameOf(id),
    data: months.map((m) => usage.find((u) => u.key_id === id && u.month === m)?.units ?? 0),
  }));
  chart?.destroy();
  chart = new Chart(byId<HTMLCanvasElement>("usage-chart"), {
    type: "bar",
    data: { labels: months, datasets },
    options: {
      maintainAspectRatio: false,
      animation: false,
      scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: "units" } } },
    },
  });
}

async function refresh(): Promise<void> {
  const [users, keys, usage, audit] = await Promise.all([
    call<{ users: User[] }>("GET", "/users"),
    call<{ keys: Key[] }>("GET", "/keys"),
    call<{ usage: Usage[] }>("GET", "/usage?months=12"),
    call<{ entries: AuditEntry[] }>("GET", "/audit?limit=100"),
  ]);
  byId<HTMLElement>("user-rows").replaceChildren(...users.users.map(userRow));
  byId<HTMLElement>("key-rows").replaceChildren(...keys.keys.map(keyRow));
  drawUsage(usage.usage, keys.keys);
  byId<HTMLElement>("audit-rows").replaceChildren(
    ...audit.entries.map((e) =>
      el(
        "tr",
        {},
        el("td", {}, new Date(e.at).toLocaleString("en")),
        el("td", {}, e.actor),
        el("td", {}, e.action),
        el("td", {}, e.target ?? ""),
      ),
    ),
  );
}

function setUpForms(): void {
  const invite = byId<HTMLFormElement>("invite-form");
  invite.addEventListener("submit", (event) => {
    event.preventDefault();
    const email = byId<HTMLInputElement>("invite-email");
    const role = byId<HTMLSelectElement>("invite-role");
    void act(byId("user-status"), async () => {
      const { reset_link } = await call<{ reset_link: string }>("POST", "/users", {
        email: email.value.trim(),
        role: role.value,
      });
      showLink(reset_link);
      const text = `${email.value.trim()} invited as ${role.value}: pass this one-time link on (valid 24 hours).`;
      email.value = "";
      return text;
    });
  });
  const keyForm = byId<HTMLFormElement>("key-form");
  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const label = byId<HTMLInputElement>("key-label");
    void act(byId("key-status"), async () => {
      const { key } = await call<{ key: string }>("POST", "/keys", { label: label.value.trim() || null });
      byId<HTMLElement>("new-key").hidden = false;
      byId<HTMLElement>("new-key-value").textContent = key;
      label.value = "";
      return "Key created.";
    });
  });
}

async function start(): Promise<void> {
  const signedIn = await StreetflowApi.fromSession().catch(() => null);
  if (!signedIn) {
    status.replaceChildren("Sign in first: ", el("a", { href: "./" }, "go to the sign-in page"), ".");
    status.dataset.kind = "error";
    return;
  }
  api = signedIn.api;
  me = signedIn.session.user.email;
  byId<HTMLElement>("account-name").textContent = `${signedIn.session.organization.name} · ${me}`;
  if (signedIn.session.user.role !== "admin") {
    setStatus(status, `The admin page needs the admin role; you are ${signedIn.session.user.role}.`, "error");
    return;
  }
  setUpForms();
  try {
    await refresh();
    byId<HTMLElement>("admin-content").hidden = false;
  } catch (err) {
    setStatus(status, err instanceof ApiError ? err.message : messageOf(err), "error");
  }
}

void start();
