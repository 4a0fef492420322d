import { ApiError, StreetflowApi, type AnalysisEntry, type NetworkInfo, type ZoneSetSummary } from "./api.js";
import { ROAD_STYLE, StreetMap } from "./map.js";

/** sessionStorage only: the key is gone when the tab closes and is never written to disk by the page. */
const KEY_STORAGE = "streetflow.apiKey";
const ANALYSIS_POLL_MS = 5_000;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const ui = {
  signinView: $<HTMLElement>("signin-view"),
  signinForm: $<HTMLFormElement>("signin-form"),
  keyInput: $<HTMLInputElement>("api-key"),
  signinButton: $<HTMLButtonElement>("signin-button"),
  signinError: $<HTMLElement>("signin-error"),
  appView: $<HTMLElement>("app-view"),
  signOut: $<HTMLButtonElement>("sign-out"),
  sidebarToggle: $<HTMLButtonElement>("sidebar-toggle"),
  networkSelect: $<HTMLSelectElement>("network-select"),
  networkStatus: $<HTMLElement>("network-status"),
  legend: $<HTMLElement>("legend"),
  zoneSetStatus: $<HTMLElement>("zone-set-status"),
  zoneSetList: $<HTMLUListElement>("zone-set-list"),
  analysisStatus: $<HTMLElement>("analysis-status"),
  analysisBody: $<HTMLTableSectionElement>("analysis-rows"),
  analysisTable: $<HTMLTableElement>("analysis-table"),
  map: $<HTMLElement>("map"),
};

function setStatus(el: HTMLElement, text: string, kind: "info" | "loading" | "error" = "info"): void {
  el.textContent = text;
  el.dataset.kind = kind;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

// ---- sign-in ----

async function signIn(key: string): Promise<void> {
  const api = new StreetflowApi(key);
  ui.signinButton.disabled = true;
  setStatus(ui.signinError, "Signing in…", "loading");
  try {
    const networks = await api.listNetworks();
    sessionStorage.setItem(KEY_STORAGE, key);
    setStatus(ui.signinError, "");
    startApp(api, networks);
  } catch (err) {
    sessionStorage.removeItem(KEY_STORAGE);
    const text =
      err instanceof ApiError && err.status === 401
        ? "This API key is not valid."
        : `Sign-in failed: ${messageOf(err)}`;
    setStatus(ui.signinError, text, "error");
    ui.keyInput.focus();
  } finally {
    ui.signinButton.disabled = false;
  }
}

function signOut(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  // A fresh page drops the map, its layers and the poll timer in one go.
  location.reload();
}

/** Any 401 after sign-in means the key was revoked: back to the form. */
function handleAuthFailure(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.status !== 401) return false;
  signOut();
  return true;
}

// ---- the signed-in application ----

function startApp(api: StreetflowApi, networks: NetworkInfo[]): void {
  ui.signinView.hidden = true;
  ui.appView.hidden = false;
  ui.signOut.hidden = false;
  ui.sidebarToggle.hidden = false;
  const map = new StreetMap(ui.map);
  renderLegend();
  void setUpNetworks(api, map, networks);
  void loadZoneSets(api, map);
  void pollAnalyses(api);
}

async function setUpNetworks(api: StreetflowApi, map: StreetMap, networks: NetworkInfo[]): Promise<void> {
  ui.networkSelect.replaceChildren(
    ...networks.map(
      (n) =>
        new Option(`${n.country.toUpperCase()} · ${n.segment_count.toLocaleString()} segments`, n.country),
    ),
  );
  if (networks.length === 0) {
    ui.networkSelect.disabled = true;
    setStatus(ui.networkStatus, "No road network is imported yet (streetflow network import).");
    return;
  }
  let followViewport = false;
  let latestRequest = 0;
  const show = async (network: NetworkInfo, bbox = network.bbox, fit = true) => {
    const request = ++latestRequest;
    setStatus(ui.networkStatus, "Loading road segments…", "loading");
    try {
      const segments = await api.segments(network.country, bbox);
      // A slower earlier answer must not replace a newer view.
      if (request !== latestRequest) return;
      await map.showNetwork(segments, fit ? network.bbox : undefined);
      // Over the cap only the main roads came: fetch the viewport again as the user zooms in.
      followViewport = segments.truncated || followViewport;
      const shown = segments.features.length.toLocaleString();
      setStatus(
        ui.networkStatus,
        segments.truncated
          ? `${shown} of ${segments.total.toLocaleString()} segments shown (main roads first); zoom in for more.`
          : `${shown} segments shown.`,
      );
    } catch (err) {
      if (!handleAuthFailure(err))
        setStatus(ui.networkStatus, `Road network failed to load: ${messageOf(err)}`, "error");
    }
  };
  const selected = () => networks.find((n) => n.country === ui.networkSelect.value) ?? networks[0];
  ui.networkSelect.addEventListener("change", () => {
    followViewport = false;
    void show(selected());
  });
  let timer: number | undefined;
  map.map.on("moveend", () => {
    if (!followViewport) return;
    clearTimeout(timer);
    timer = window.setTimeout(() => void show(selected(), map.currentBbox(), false), 300);
  });
  await show(selected());
}

function renderLegend(): void {
  ui.legend.replaceChildren(
    ...Object.entries(ROAD_STYLE).map(([cls, style]) => {
      const item = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch line";
      swatch.style.background = style.colour;
      swatch.style.height = `${Math.max(2, style.width)}px`;
      item.append(swatch, cls.replace("_", " "));
      return item;
    }),
  );
}

async function loadZoneSets(api: StreetflowApi, map: StreetMap): Promise<void> {
  setStatus(ui.zoneSetStatus, "Loading zone sets…", "loading");
  try {
    const sets = await api.listZoneSets();
    ui.zoneSetList.replaceChildren(...sets.map((set) => zoneSetItem(api, map, set)));
    setStatus(ui.zoneSetStatus, sets.length === 0 ? "No zone sets yet." : "");
  } catch (err) {
    if (!handleAuthFailure(err))
      setStatus(ui.zoneSetStatus, `Zone sets failed to load: ${messageOf(err)}`, "error");
  }
}

function zoneSetItem(api: StreetflowApi, map: StreetMap, set: ZoneSetSummary): HTMLLIElement {
  const item = document.createElement("li");
  const checkbox = document.createElement("input");
  checkbox.type = "checkbox";
  checkbox.id = `zone-set-${set.uuid}`;
  const label = document.createElement("label");
  label.htmlFor = checkbox.id;
  const swatch = document.createElement("span");
  swatch.className = "swatch";
  swatch.setAttribute("aria-hidden", "true");
  const detail = document.createElement("small");
  detail.textContent = `${set.zone_count.toLocaleString()} ${set.geom_type} zone${set.zone_count === 1 ? "" : "s"}`;
  label.append(swatch, set.name, " ", detail);
  const status = document.createElement("span");
  status.className = "status";
  status.setAttribute("role", "status");
  const zoneList = document.createElement("details");
  zoneList.hidden = true;
  item.append(checkbox, label, status, zoneList);

  checkbox.addEventListener("change", async () => {
    if (!checkbox.checked) {
      map.hideZoneSet(set.uuid);
      swatch.style.background = "";
      zoneList.hidden = true;
      return;
    }
    checkbox.disabled = true;
    setStatus(status, "Loading…", "loading");
    try {
      const zones = await api.zoneSet(set.uuid);
      swatch.style.background = await map.showZoneSet(set.uuid, zones);
      fillZoneList(zoneList, zones.features, map);
      setStatus(status, "");
    } catch (err) {
      checkbox.checked = false;
      if (!handleAuthFailure(err)) setStatus(status, `Failed: ${messageOf(err)}`, "error");
    } finally {
      checkbox.disabled = false;
    }
  });
  return item;
}

/** Most zone buttons listed per set; larger sets are explored on the map. */
const MAX_LISTED_ZONES = 300;

/** Zone names as buttons that show the zone on the map, so names are reachable without a mouse. */
function fillZoneList(details: HTMLDetailsElement, zones: GeoJSON.Feature[], map: StreetMap): void {
  const summary = document.createElement("summary");
  summary.textContent = `Zones (${zones.length.toLocaleString()})`;
  const list = document.createElement("ul");
  list.className = "zone-names";
  for (const zone of zones.slice(0, MAX_LISTED_ZONES)) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = String(zone.properties?.name ?? "(unnamed)");
    button.addEventListener("click", () => map.focusZone(zone));
    const li = document.createElement("li");
    li.append(button);
    list.append(li);
  }
  if (zones.length > MAX_LISTED_ZONES) {
    const more = document.createElement("li");
    more.textContent = `and ${(zones.length - MAX_LISTED_ZONES).toLocaleString()} more`;
    list.append(more);
  }
  details.replaceChildren(summary, list);
  details.hidden = false;
}

async function pollAnalyses(api: StreetflowApi): Promise<void> {
  setStatus(ui.analysisStatus, "Loading analyses…", "loading");
  const refresh = async () => {
    if (document.hidden) return;
    try {
      renderAnalyses(await api.listAnalyses());
    } catch (err) {
      if (!handleAuthFailure(err))
        setStatus(ui.analysisStatus, `Analyses failed to load: ${messageOf(err)}`, "error");
    }
  };
  await refresh();
  window.setInterval(() => void refresh(), ANALYSIS_POLL_MS);
}

function renderAnalyses(analyses: AnalysisEntry[]): void {
  ui.analysisTable.hidden = analyses.length === 0;
  ui.analysisBody.replaceChildren(...analyses.map(analysisRow));
  const time = new Date().toLocaleTimeString();
  setStatus(
    ui.analysisStatus,
    analyses.length === 0 ? `No analyses yet (checked ${time}).` : `Updated ${time}.`,
  );
}

function analysisRow(a: AnalysisEntry): HTMLTableRowElement {
  const row = document.createElement("tr");
  const cell = (text: string, className = "") => {
    const td = document.createElement("td");
    td.textContent = text;
    td.className = className;
    return td;
  };
  const processing = a.status === "Processing";
  const status = cell(processing ? `Processing ${Math.round(a.progress * 100)} %` : a.status, "badge");
  status.dataset.status = a.status.toLowerCase().replace(/\s+/g, "-");
  if (a.failure_reason) status.title = a.failure_reason;
  row.append(cell(a.name), cell(a.analysis_type.replace(/_/g, " ")), status);
  return row;
}

// ---- page chrome ----

function setUpSidebarToggle(): void {
  const narrow = window.matchMedia("(max-width: 800px)");
  const setOpen = (open: boolean) => {
    document.body.classList.toggle("sidebar-closed", !open);
    ui.sidebarToggle.setAttribute("aria-expanded", String(open));
  };
  setOpen(!narrow.matches);
  narrow.addEventListener("change", () => setOpen(!narrow.matches));
  ui.sidebarToggle.addEventListener("click", () =>
    setOpen(document.body.classList.contains("sidebar-closed")),
  );
}

ui.signinForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const key = ui.keyInput.value.trim();
  if (key === "") {
    setStatus(ui.signinError, "Enter your API key.", "error");
    ui.keyInput.focus();
    return;
  }
  void signIn(key);
});
ui.signOut.addEventListener("click", signOut);
setUpSidebarToggle();

const savedKey = sessionStorage.getItem(KEY_STORAGE);
if (savedKey) void signIn(savedKey);
else ui.keyInput.focus();
