/** The "New analysis" form: fields from the API's definitions, checks before sending, server issues in place. */
import { ApiError, type ZoneSetSummary } from "../../api.js";
import type { AppContext } from "../../context.js";
import { zoneSetOnNetwork } from "../../networks.js";
import { el, setStatus, statusLine } from "../../ui.js";
import type { AnalysesApi } from "./api.js";
import {
  ANALYSIS_TYPE_CHOICES,
  DEFAULT_TOP_ROUTES,
  HOME_WORK_KINDS,
  MAX_TOP_ROUTES,
  METRIC_TYPE_CHOICES,
  SEGMENT_TYPES,
  analysisRequest,
  analysisTypeChoice,
  checkForm,
  DAY_PARTS,
  DAY_TYPES,
  describePeriods,
  isoPeriods,
  issueSlot,
  MAX_NAME_LENGTH,
  namedItems,
  NON_VEHICLE_MODES,
  OUTPUT_TYPES,
  suggestedRange,
  TRAVEL_MODES,
  type AnalysisForm,
  type HomeWorkKind,
  type Issue,
  type UsRange,
} from "./form-logic.js";

let ids = 0;
const nextId = (prefix: string) => `${prefix}-${++ids}`;

/** A field's error line; the control points at it with aria-describedby and is marked invalid while it shows. */
interface Slot {
  error: HTMLElement;
  control: HTMLElement;
}

function errorLine(): HTMLElement {
  return el("p", { className: "field-error", id: nextId("af-error") });
}

function describedBy(control: HTMLElement, error: HTMLElement): void {
  const existing = control.getAttribute("aria-describedby");
  control.setAttribute("aria-describedby", existing ? `${existing} ${error.id}` : error.id);
}

/** `<label>text</label><control>` stacked, with the error line under them. */
function labelled(text: string, control: HTMLElement, slots: Map<string, Slot>, slot: string, hint?: string) {
  control.id ||= nextId("af");
  const error = errorLine();
  describedBy(control, error);
  slots.set(slot, { error, control });
  const hintEl = hint ? el("small", { className: "hint", id: nextId("af-hint") }, hint) : null;
  if (hintEl) describedBy(control, hintEl);
  return el(
    "div",
    { className: "field" },
    el("label", { htmlFor: control.id }, text),
    control,
    hintEl,
    error,
  );
}

/** A group of checkboxes (or radios) in a fieldset with its legend and one error line. */
function choiceGroup(
  legend: string,
  slots: Map<string, Slot>,
  slot: string,
  ...children: (Node | null)[]
): HTMLFieldSetElement {
  const error = errorLine();
  const fieldset = el("fieldset", { className: "choices" }, el("legend", {}, legend), ...children, error);
  describedBy(fieldset, error);
  slots.set(slot, { error, control: fieldset });
  return fieldset;
}

function checkbox(name: string, value: string, text: Node | string, checked = false) {
  const input = el("input", { type: "checkbox", name, value, checked, id: nextId("af-check") });
  return el("label", { className: "choice", htmlFor: input.id }, input, text);
}

const checkedValues = (root: HTMLElement, name: string) =>
  [...root.querySelectorAll<HTMLInputElement>(`input[name="${name}"]:checked`)].map((i) => i.value);

/** `Peak AM|0609` → `Peak AM (06–09 h)`, `Average Weekday|14` → `Average Weekday (Mon–Thu)`. */
function describeItem(item: string): string {
  const [name, code] = item.split("|");
  if (code.length === 2) {
    const days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    return `${name} (${days[Number(code[0]) - 1]}–${days[Number(code[1]) - 1]})`;
  }
  return `${name} (${code.slice(0, 2)}:00–${code.slice(2)}:59)`;
}

/**
 * Day types or day parts: the API's defaults as checked boxes and a text field for more items in the
 * request's `name|code` grammar; `items()` reads both.
 */
function namedItemGroup(
  legend: string,
  field: string,
  defaults: readonly string[],
  slots: Map<string, Slot>,
  more: { label: string; example: string },
): { group: HTMLFieldSetElement; items: () => string[] } {
  const extra = el("input", { type: "text", autocomplete: "off", id: nextId("af-more") });
  extra.placeholder = `e.g. ${more.example}`;
  const group = choiceGroup(
    legend,
    slots,
    field,
    ...defaults.map((d) => checkbox(field, d, describeItem(d), true)),
    el("label", { htmlFor: extra.id }, more.label),
    extra,
  );
  return { group, items: () => namedItems(checkedValues(group, field), extra.value) };
}

export interface AnalysisFormHandle {
  element: HTMLFormElement;
  open: () => void;
  close: () => void;
}

/**
 * Builds the form; `onCreated` hears the new analysis' uuid after the server accepted it and the list was
 * told to refresh.
 */
export function analysisForm(
  ctx: AppContext,
  api: AnalysesApi,
  onCreated: (uuid: string) => void,
  onClose: () => void,
): AnalysisFormHandle {
  const slots = new Map<string, Slot>();
  const status = statusLine();
  let supported: UsRange[] | null = null;
  // The API lists with_calibration too; the shared summary type does not name it yet.
  let zoneSets: (ZoneSetSummary & { with_calibration?: boolean })[] = [];

  const name = el("input", { type: "text", maxLength: MAX_NAME_LENGTH, autocomplete: "off" });
  name.placeholder = "e.g. Harbour flows, June";
  const email = el("select", {}, el("option", { value: "" }, "Choose your login…"));
  for (const user of ctx.account.users) email.append(el("option", { value: user.email }, user.email));
  email.value = ctx.userEmail ?? "";
  const analysisType = el(
    "select",
    {},
    ...ANALYSIS_TYPE_CHOICES.map((t) => el("option", { value: t.value }, t.label)),
  );
  const geographyType = el("select", {}, el("option", { value: "" }, "Choose preset areas…"));
  const travelMode = el("select", {}, ...TRAVEL_MODES.map((m) => el("option", { value: m.value }, m.label)));

  const originList = el("div", { className: "choice-list" });
  const destinationList = el("div", { className: "choice-list" });
  const destinationGroup = choiceGroup("Destination zone sets", slots, "dz_sets", destinationList);
  const geographyGroup = labelled(
    "Destination preset areas",
    geographyType,
    slots,
    "geography_type",
    "Boundaries imported with the road network (OSM admin levels, postal codes).",
  );

  const middleList = el("div", { className: "choice-list" });
  const middleGroup = choiceGroup(
    "Middle-filter zone sets (pass-through zones)",
    slots,
    "mf_sets",
    middleList,
  );
  const aadtList = el("div", { className: "choice-list" });
  const aadtYear = el("input", {
    type: "number",
    min: "2000",
    max: "2099",
    step: "1",
    id: nextId("af-year"),
  });
  aadtYear.value = String(new Date().getUTCFullYear() - 1);
  const aadtGroup = el(
    "div",
    {},
    choiceGroup("AADT reference zone sets (calibrated counts)", slots, "az_sets", aadtList),
    labelled("AADT year", aadtYear, slots, "aadt_year", "The stored year the annual average is taken over."),
  );
  const segmentTypes = SEGMENT_TYPES.map((t) => checkbox("segment_types", t, t));
  const segmentGroup = choiceGroup(
    "Road classes in polygon zones (none: all)",
    slots,
    "segment_types",
    ...segmentTypes,
  );

  const topRoutesCount = el("input", {
    type: "number",
    min: "1",
    max: String(MAX_TOP_ROUTES),
    step: "1",
    id: nextId("af-top-routes"),
  });
  topRoutesCount.value = String(DEFAULT_TOP_ROUTES);
  const topRoutesGroup = labelled(
    "Routes per zone pair or zone",
    topRoutesCount,
    slots,
    "top_routes_count",
    `The most used routes kept per day type and day part, 1 to ${MAX_TOP_ROUTES}.`,
  );
  const metricType = el(
    "select",
    { id: nextId("af-metric-type") },
    ...METRIC_TYPE_CHOICES.map((m) => el("option", { value: m.value }, m.label)),
  );
  const metricTypeGroup = labelled(
    "Figures",
    metricType,
    slots,
    "metric_type",
    "Traffic and sample size come with every choice.",
  );

  const homeWorkKinds = HOME_WORK_KINDS.map((k) => checkbox("hwl_kinds", k.value, k.label));
  const homeWorkPlaces = el("select", {}, el("option", { value: "" }, "500 m grid cells"));
  const homeWorkGroup = el(
    "div",
    {},
    choiceGroup(
      "Home and work locations: where the zones' travellers live and work (none: off)",
      slots,
      "enable_home_work_locations",
      ...homeWorkKinds,
    ),
    labelled(
      "Home and work places over",
      homeWorkPlaces,
      slots,
      "homework_geography",
      "Shares of the travellers' trips by the grid cell or preset area of their home and work place.",
    ),
  );

  const periodsHint = el("p", { className: "status", id: nextId("af-periods"), attrs: { role: "status" } });
  const rangeRows = el("div", { className: "range-rows" });
  const addRange = el("button", { type: "button" }, "Add date range");

  const dayTypes = namedItemGroup("Day types", "day_types", DAY_TYPES, slots, {
    label: "More day types (name|first and last weekday, 1 = Monday)",
    example: "Weekday|15",
  });
  const dayParts = namedItemGroup("Day parts", "day_parts", DAY_PARTS, slots, {
    label: "More day parts (name|first and last hour, 00–23)",
    example: "Evening|1921",
  });

  const outputs = OUTPUT_TYPES.map((type) => {
    const input = el("input", {
      type: "radio",
      name: "output_type",
      value: type.value,
      checked: type.value === "index",
      id: nextId("af-out"),
    });
    const hint = el("small", { className: "hint", id: nextId("af-hint") }, type.hint);
    describedBy(input, hint);
    const label = el("label", { className: "choice", htmlFor: input.id }, input, type.label);
    return { value: type.value, input, nodes: [label, hint] };
  });
  const outputIndex = outputs.find((o) => o.value === "index")!.input;
  const outputVolume = outputs.find((o) => o.value === "volume")!.input;
  const volumeHint = el("small", { className: "hint" });
  const tripAttributes = checkbox(
    "trip_attributes",
    "yes",
    "Trip attributes (duration, length, speed, circuity)",
  );
  const travelerAttributes = checkbox(
    "traveler_attributes",
    "yes",
    "Traveler attributes (trip purpose, income)",
  );

  const formError = errorLine();
  slots.set("form", { error: formError, control: formError });
  const submit = el("button", { type: "submit", className: "primary" }, "Create analysis");
  const cancel = el("button", { type: "button" }, "Cancel");

  const form = el(
    "form",
    {
      className: "analysis-form",
      noValidate: true,
      hidden: true,
      attrs: { "aria-labelledby": "analysis-form-heading" },
    },
    el("h3", { id: "analysis-form-heading" }, "New analysis"),
    labelled("Name", name, slots, "analysis_name", "Optional; at most 50 characters, unique."),
    ctx.userEmail
      ? el("p", { className: "hint" }, `Created as ${ctx.userEmail}.`)
      : labelled("Your login e-mail", email, slots, "insight_login_email"),
    labelled("Analysis type", analysisType, slots, "analysis_type"),
    labelled("Travel mode", travelMode, slots, "travel_mode_type"),
    choiceGroup("Origin zone sets", slots, "oz_sets", originList),
    middleGroup,
    destinationGroup,
    geographyGroup,
    aadtGroup,
    segmentGroup,
    topRoutesGroup,
    metricTypeGroup,
    homeWorkGroup,
    choiceGroup("Date ranges", slots, "date_ranges", periodsHint, rangeRows, addRange),
    dayTypes.group,
    dayParts.group,
    choiceGroup("Output", slots, "output_type", ...outputs.flatMap((o) => o.nodes), volumeHint),
    el(
      "fieldset",
      { className: "choices" },
      el("legend", {}, "Extra metrics"),
      tripAttributes,
      travelerAttributes,
    ),
    formError,
    el("div", { className: "form-actions" }, submit, cancel),
    status,
  );

  // ---- date ranges ----

  const rangeInputs = () =>
    [...rangeRows.querySelectorAll<HTMLElement>(".range-row")].map((row) => ({
      start: row.querySelector<HTMLInputElement>('input[data-end="start"]')!,
      end: row.querySelector<HTMLInputElement>('input[data-end="end"]')!,
    }));

  const applyLimits = () => {
    const periods = supported ? isoPeriods(supported) : [];
    const [min, max] = [periods[0]?.start ?? "", periods.at(-1)?.end ?? ""];
    for (const { start, end } of rangeInputs())
      for (const input of [start, end]) {
        input.min = min;
        input.max = max;
      }
  };

  /** Rows are renumbered after a removal, so their error slots stay `date_ranges[i]` as the server counts. */
  const renumberRanges = () => {
    for (const key of [...slots.keys()]) if (key.startsWith("date_ranges[")) slots.delete(key);
    [...rangeRows.children].forEach((row, i) => {
      const start = row.querySelector<HTMLInputElement>('input[data-end="start"]')!;
      slots.set(`date_ranges[${i}]`, { error: row.querySelector(".field-error")!, control: start });
      row.querySelector("legend")!.textContent = `Range ${i + 1}`;
      row.querySelector<HTMLButtonElement>("button")!.hidden = rangeRows.children.length === 1;
    });
  };

  const addRangeRow = (start = "", end = "") => {
    const dateInput = (which: "start" | "end", value: string) =>
      el("input", { type: "date", value, id: nextId("af-date"), dataset: { end: which } });
    const [from, to] = [dateInput("start", start), dateInput("end", end)];
    const error = errorLine();
    for (const input of [from, to]) {
      describedBy(input, error);
      describedBy(input, periodsHint);
    }
    const remove = el("button", { type: "button", className: "link" }, "Remove");
    const row = el(
      "fieldset",
      { className: "range-row" },
      el("legend", { className: "visually-hidden" }),
      el("label", { htmlFor: from.id }, "Start date", from),
      el("label", { htmlFor: to.id }, "End date", to),
      remove,
      error,
    );
    remove.addEventListener("click", () => {
      row.remove();
      renumberRanges();
      rangeInputs()[0]?.start.focus();
    });
    rangeRows.append(row);
    renumberRanges();
    applyLimits();
    return from;
  };
  addRange.addEventListener("click", () => addRangeRow().focus());

  let periodsRequest = 0;
  const loadPeriods = async () => {
    const network = ctx.currentNetwork();
    const request = ++periodsRequest;
    supported = null;
    if (!network)
      return setStatus(periodsHint, "No road network is imported, so there are no data periods.", "error");
    setStatus(periodsHint, "Loading the data periods…", "loading");
    try {
      const periods = await api.dateRanges(network.country, travelMode.value);
      // A later mode or country change wins over a slow earlier answer.
      if (request !== periodsRequest) return;
      supported = periods.supports;
      setStatus(
        periodsHint,
        supported.length
          ? `Data available (${network.country.toUpperCase()}): ${describePeriods(supported)}. Each range must lie within one of these periods.`
          : `No data for this travel mode in ${network.country.toUpperCase()} yet.`,
        supported.length ? "info" : "error",
      );
      applyLimits();
      const suggestion = suggestedRange(supported);
      const [first] = rangeInputs();
      if (suggestion && first && !first.start.value && !first.end.value) {
        first.start.value = suggestion.start;
        first.end.value = suggestion.end;
      }
    } catch (err) {
      if (request === periodsRequest) ctx.showError(periodsHint, "The data periods failed to load", err);
    }
  };
  travelMode.addEventListener("change", () => {
    void loadPeriods();
    updateVolume();
  });
  ctx.events.on("network-changed", () => void loadPeriods());

  // ---- analysis type and preset geographies ----

  /** Shows the destination fields the chosen type takes. */
  const updateType = () => {
    const type = analysisTypeChoice(analysisType.value);
    destinationGroup.hidden = !type.destinations;
    geographyGroup.hidden = !type.geography;
    middleGroup.hidden = !type.middleFilters;
    aadtGroup.hidden = !type.aadt;
    segmentGroup.hidden = !type.segments;
    topRoutesGroup.hidden = !type.topRoutes;
    metricTypeGroup.hidden = !type.metricType;
    homeWorkGroup.hidden = !type.homeWork;
  };
  analysisType.addEventListener("change", updateType);

  const loadGeographies = async () => {
    const network = ctx.currentNetwork();
    const kept = [geographyType.value, homeWorkPlaces.value];
    geographyType.replaceChildren(el("option", { value: "" }, "Choose preset areas…"));
    homeWorkPlaces.replaceChildren(el("option", { value: "" }, "500 m grid cells"));
    if (!network) return;
    try {
      for (const g of await api.presetGeographies(network.country))
        for (const select of [geographyType, homeWorkPlaces])
          select.append(
            el("option", { value: g.geography_type }, `${g.geography_type}: ${g.areas} ${g.description}`),
          );
      [geographyType, homeWorkPlaces].forEach((select, i) => {
        select.value = [...select.options].some((o) => o.value === kept[i]) ? kept[i] : "";
      });
    } catch (err) {
      ctx.showError(status, "Preset geographies failed to load", err);
    }
  };
  ctx.events.on("network-changed", () => void loadGeographies());

  // ---- zone sets and output ----

  const updateVolume = () => {
    const chosen = [
      ...checkedValues(originList, "oz_sets"),
      ...checkedValues(destinationList, "dz_sets"),
      ...checkedValues(middleList, "mf_sets"),
      ...checkedValues(aadtList, "az_sets"),
    ];
    const calibrated = zoneSets.some((s) => s.with_calibration && chosen.includes(s.uuid));
    const vehicles = !NON_VEHICLE_MODES.includes(travelMode.value);
    outputVolume.disabled = !(calibrated && vehicles);
    if (outputVolume.disabled && outputVolume.checked) outputIndex.checked = true;
    volumeHint.textContent = !vehicles
      ? "Volume is calibrated with vehicle counts: not for bicycles or pedestrians."
      : calibrated
        ? "Volume scales the index with the calibrated pass-through zones of the chosen sets."
        : "Volume needs a chosen zone set with calibrated pass-through zones.";
  };

  const fillZoneSets = (sets: ZoneSetSummary[]) => {
    zoneSets = sets;
    for (const [list, field] of [
      [originList, "oz_sets"],
      [destinationList, "dz_sets"],
      [middleList, "mf_sets"],
      [aadtList, "az_sets"],
    ] as const) {
      const kept = new Set(checkedValues(list, field));
      const items = sets.map((s) =>
        checkbox(
          field,
          s.uuid,
          el("span", {}, s.name, " ", el("small", {}, `${s.zone_count} ${s.geom_type}`)),
          kept.has(s.uuid),
        ),
      );
      list.replaceChildren(
        ...(items.length
          ? items
          : [el("p", { className: "hint" }, "No zone sets yet: create one in the Zone sets tab.")]),
      );
    }
    updateVolume();
  };
  form.addEventListener("change", (e) => {
    if ((e.target as HTMLInputElement).name?.endsWith("z_sets")) updateVolume();
  });

  const loadZoneSets = async () => {
    try {
      const network = ctx.currentNetwork();
      fillZoneSets((await ctx.api.listZoneSets()).filter((set) => zoneSetOnNetwork(set, network)));
    } catch (err) {
      ctx.showError(status, "Zone sets failed to load", err);
    }
  };
  ctx.events.on("zone-sets-changed", () => void loadZoneSets());
  ctx.events.on("network-changed", () => void loadZoneSets());

  // ---- submit ----

  const clearIssues = () => {
    for (const { error, control } of slots.values()) {
      error.textContent = "";
      control.removeAttribute("aria-invalid");
    }
  };

  /** Shows each issue next to its field; focuses the first field at fault. */
  const showIssues = (issues: Issue[]) => {
    clearIssues();
    const formSlot = slots.get("form")!;
    let first: HTMLElement | null = null;
    // A zone activity's geography_type is its home and work places' (the OD preset field is hidden).
    const homeWork = analysisTypeChoice(analysisType.value).homeWork;
    for (const raw of issues) {
      const issue =
        homeWork && raw.field === "geography_type" ? { ...raw, field: "homework_geography" } : raw;
      // A date range the form has no row for (it was removed meanwhile) falls back to the group.
      const target =
        slots.get(issueSlot(issue.field)) ??
        slots.get(issueSlot(issue.field.replace(/\[\d+\]$/, ""))) ??
        formSlot;
      const text = target === formSlot && issue.field ? `${issue.field}: ${issue.message}` : issue.message;
      target.error.textContent = [target.error.textContent, text].filter(Boolean).join(" ");
      if (target === formSlot) continue;
      target.control.setAttribute("aria-invalid", "true");
      first ??= target.control;
    }
    const focusable = first?.matches("input, select")
      ? first
      : first?.querySelector<HTMLElement>("input, select");
    focusable?.focus();
  };

  const readForm = (): AnalysisForm => ({
    name: name.value,
    email: ctx.userEmail ?? email.value,
    analysisType: analysisType.value,
    travelMode: travelMode.value,
    country: ctx.currentNetwork()?.country ?? "",
    originSets: checkedValues(originList, "oz_sets"),
    destinationSets: checkedValues(destinationList, "dz_sets"),
    geographyType: geographyType.value,
    middleSets: checkedValues(middleList, "mf_sets"),
    aadtSets: checkedValues(aadtList, "az_sets"),
    aadtYear: aadtYear.value,
    segmentTypes: segmentTypes
      .map((c) => c.querySelector("input")!)
      .filter((i) => i.checked)
      .map((i) => i.value),
    homeWorkKinds: homeWorkKinds
      .map((c) => c.querySelector("input")!)
      .filter((i) => i.checked)
      .map((i) => i.value as HomeWorkKind),
    homeWorkGeography: homeWorkPlaces.value,
    topRoutesCount: topRoutesCount.value,
    metricType: metricType.value,
    dateRanges: rangeInputs().map(({ start, end }) => ({ start: start.value, end: end.value })),
    dayTypes: dayTypes.items(),
    dayParts: dayParts.items(),
    outputType: outputs.find((o) => o.input.checked)?.value ?? "index",
    tripAttributes: tripAttributes.querySelector("input")!.checked,
    travelerAttributes: travelerAttributes.querySelector("input")!.checked,
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = readForm();
    const issues = checkForm(values, supported);
    if (issues.length) {
      showIssues(issues);
      setStatus(status, "Please correct the fields marked above.", "error");
      return;
    }
    clearIssues();
    submit.disabled = true;
    setStatus(status, "Creating the analysis…", "loading");
    try {
      const created = await api.create(analysisRequest(values));
      setStatus(status, "");
      ctx.events.emit("analyses-changed", undefined);
      name.value = "";
      close();
      onCreated(created.uuid);
    } catch (err) {
      if (err instanceof ApiError && (err.issues?.length || err.field)) {
        showIssues(err.issues ?? [{ field: err.field!, message: err.message }]);
        setStatus(status, "The server refused the analysis; see the messages above.", "error");
      } else ctx.showError(status, "The analysis was not created", err);
    } finally {
      submit.disabled = false;
    }
  });

  const open = () => {
    form.hidden = false;
    clearIssues();
    setStatus(status, "");
    void loadZoneSets();
    void loadGeographies();
    if (supported === null) void loadPeriods();
    name.focus();
  };
  const close = () => {
    form.hidden = true;
    onClose();
  };
  cancel.addEventListener("click", close);
  form.addEventListener("keydown", (e) => {
    if (e.key === "Escape") close();
  });
  addRangeRow();
  updateType();
  return { element: form, open, close };
}
