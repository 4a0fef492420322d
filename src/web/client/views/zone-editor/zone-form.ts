/**
 * One zone of the editor's list: a disclosure (`<details>`) whose summary names the zone and counts its
 * problems, and whose body holds the property form, built when first opened (uploads can hold thousands of
 * zones). Fields not applying to the zone (direction of a non-pass-through zone, calibration without
 * "with calibration") are hidden and not sent.
 */
import { el } from "../../ui.js";
import {
  fieldApplies,
  RECOMMENDED_RATIOS,
  ZONE_FIELDS,
  type FieldSpec,
  type SetOptions,
  type ZoneForm,
} from "./model.js";

export interface ZoneIssue {
  property: string | null;
  message: string;
}

export interface EditorZone {
  key: string;
  form: ZoneForm;
  issues: ZoneIssue[];
  /** False for shapes kept as they came from a file (several parts, holes): shown, not editable. */
  editable: boolean;
}

export interface ZoneItemActions {
  /** The disclosure was opened: select the zone on the map. */
  opened: (zone: EditorZone) => void;
  zoomTo: (zone: EditorZone) => void;
  remove: (zone: EditorZone) => void;
}

const fieldId = (zone: EditorZone, key: string) => `zone-${zone.key}-${key}`;

function summaryText(zone: EditorZone, index: number): string {
  const name = zone.form.name.trim() || "(no name)";
  return `#${index} ${name}`;
}

function problemsBadge(zone: EditorZone): HTMLElement | null {
  const n = zone.issues.length;
  return n === 0 ? null : el("span", { className: "zone-problems" }, `${n} problem${n === 1 ? "" : "s"}`);
}

function inputFor(spec: FieldSpec, zone: EditorZone, id: string): HTMLInputElement | HTMLSelectElement {
  const value = zone.form[spec.key];
  if (spec.type === "flag" || spec.type === "bool")
    return el("input", { type: "checkbox", id, checked: value as boolean });
  if (spec.type === "choice") {
    const select = el("select", { id }, new Option("(none)", ""));
    for (const choice of spec.choices!) select.append(new Option(choice, choice));
    select.value = value as string;
    return select;
  }
  // Text, so what was typed stays visible and the save can say what is wrong with it.
  const numeric = spec.type === "integer" ? "numeric" : spec.type === "number" ? "decimal" : "text";
  return el("input", {
    type: "text",
    id,
    value: value as string,
    autocomplete: "off",
    attrs: { inputmode: numeric, spellcheck: "false" },
  });
}

function fieldRow(spec: FieldSpec, zone: EditorZone): HTMLElement {
  const id = fieldId(zone, spec.key);
  const input = inputFor(spec, zone, id);
  const error = el("p", { className: "field-error", id: `${id}-error` });
  input.setAttribute("aria-describedby", error.id);
  input.dataset.key = spec.key;
  const label = el("label", { htmlFor: id }, spec.label);
  const checkbox = input instanceof HTMLInputElement && input.type === "checkbox";
  return el(
    "div",
    { className: checkbox ? "zone-field check" : "zone-field", dataset: { field: spec.key } },
    ...(checkbox ? [input, label] : [label, input]),
    error,
  );
}

/** Shows the fields that apply to the zone now, hides the rest. */
function refreshApplicable(body: HTMLElement, zone: EditorZone, set: SetOptions): void {
  for (const spec of ZONE_FIELDS) {
    const row = body.querySelector<HTMLElement>(`[data-field="${spec.key}"]`);
    if (row) row.hidden = !fieldApplies(spec, zone.form, set);
  }
}

function readInput(zone: EditorZone, input: HTMLInputElement | HTMLSelectElement): void {
  const key = input.dataset.key as keyof ZoneForm;
  const before = zone.form[key];
  (zone.form[key] as string | boolean) =
    input instanceof HTMLInputElement && input.type === "checkbox" ? input.checked : input.value;
  // The spec's recommended split fills empty ratios when a calibration type is first chosen.
  if (key === "calibration_type" && before === "" && input.value !== "")
    for (const [ratio, value] of Object.entries(RECOMMENDED_RATIOS))
      if (zone.form[ratio as keyof ZoneForm] === "") (zone.form[ratio as keyof ZoneForm] as string) = value;
}

/** Puts each issue beside its field when the field is shown, else in the zone's own message list. */
function showIssues(body: HTMLElement, zone: EditorZone): void {
  const general = body.querySelector<HTMLElement>(".zone-messages")!;
  general.replaceChildren();
  for (const error of body.querySelectorAll<HTMLElement>(".field-error")) error.textContent = "";
  for (const input of body.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
  for (const issue of zone.issues) {
    const row = issue.property
      ? body.querySelector<HTMLElement>(`[data-field="${issue.property}"]:not([hidden])`)
      : null;
    if (!row) {
      general.append(el("li", {}, issue.message));
      continue;
    }
    const error = row.querySelector<HTMLElement>(".field-error")!;
    error.textContent = error.textContent ? `${error.textContent} ${issue.message}` : issue.message;
    row.querySelector("input, select")!.setAttribute("aria-invalid", "true");
  }
}

/** The form of a zone; `set` answers the set's current options (they change while the form is open). */
function zoneBody(zone: EditorZone, set: () => SetOptions, actions: ZoneItemActions, summary: HTMLElement) {
  const zoom = el("button", { type: "button" }, "Zoom to zone");
  const remove = el("button", { type: "button", className: "danger" }, "Delete zone");
  zoom.addEventListener("click", () => actions.zoomTo(zone));
  remove.addEventListener("click", () => actions.remove(zone));
  const fixedNote =
    !zone.editable &&
    el(
      "p",
      { className: "hint" },
      "This shape has several parts or holes: it is kept as loaded, not editable.",
    );
  const body = el(
    "div",
    { className: "zone-body" },
    el("ul", { className: "zone-messages" }),
    fixedNote,
    ...ZONE_FIELDS.map((spec) => fieldRow(spec, zone)),
    el("div", { className: "zone-actions" }, zoom, remove),
  );
  body.addEventListener("input", (e) => {
    const input = e.target as HTMLInputElement | HTMLSelectElement;
    if (!input.dataset.key) return;
    readInput(zone, input);
    if (input.dataset.key === "calibration_type")
      for (const key of Object.keys(RECOMMENDED_RATIOS))
        body.querySelector<HTMLInputElement>(`[data-key="${key}"]`)!.value = zone.form[
          key as keyof ZoneForm
        ] as string;
    refreshApplicable(body, zone, set());
    updateSummary(summary, zone);
  });
  refreshApplicable(body, zone, set());
  showIssues(body, zone);
  return body;
}

function updateSummary(summary: HTMLElement, zone: EditorZone): void {
  const index = Number(summary.dataset.index);
  summary.replaceChildren(
    el("span", { className: "zone-label" }, summaryText(zone, index)),
    problemsBadge(zone) ?? "",
  );
}

/** The list item of one zone; its form is built on first opening and kept up to date by `refresh`. */
export function zoneItem(zone: EditorZone, index: number, set: SetOptions, actions: ZoneItemActions) {
  const summary = el("summary", { dataset: { index: String(index) } });
  updateSummary(summary, zone);
  const details = el("details", {}, summary);
  const item = el("li", { dataset: { key: zone.key } }, details);
  item.classList.toggle("faulty", zone.issues.length > 0);
  const bodyOf = () => details.querySelector<HTMLElement>(".zone-body");
  const build = () => details.append(zoneBody(zone, () => set, actions, summary));
  details.addEventListener("toggle", () => {
    if (!details.open) return;
    if (!bodyOf()) build();
    // Opened by the editor (map selection, problems to show): the map needs no selecting.
    if (details.dataset.quiet) delete details.dataset.quiet;
    else actions.opened(zone);
  });
  return {
    item,
    /** Opens the form without selecting the zone on the map (the caller did, or need not). */
    open: () => {
      if (details.open) return;
      if (!bodyOf()) build();
      details.dataset.quiet = "1";
      details.open = true;
    },
    /** Brings the summary and a built form up to date with new issues or set options, keeping focus. */
    refresh: (nextSet: SetOptions) => {
      set = nextSet;
      updateSummary(summary, zone);
      item.classList.toggle("faulty", zone.issues.length > 0);
      const body = bodyOf();
      if (!body) return;
      refreshApplicable(body, zone, set);
      showIssues(body, zone);
    },
    focusName: () =>
      details.querySelector<HTMLInputElement>(`#${CSS.escape(fieldId(zone, "name"))}`)?.focus(),
  };
}

export type ZoneItem = ReturnType<typeof zoneItem>;
