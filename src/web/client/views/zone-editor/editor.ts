/**
 * The zone-set editor of the "Zone sets" tab: zones drawn on the map (Terra Draw), added at the map centre
 * (the keyboard's way) or loaded from a file, each with its property form in a list; saved with
 * POST /api/v2/zone_sets, whose problems are shown beside the zone at fault and marked red on the map.
 */
import type { Geometry } from "geojson";
import type { AppContext } from "../../context.js";
import { bboxOf } from "../../map.js";
import { byId, el, messageOf, setStatus } from "../../ui.js";
import { createZoneSet, issuesOf } from "./api.js";
import { newZoneKey, ZoneDrawing, type DrawTool, type EditableGeometry } from "./draw.js";
import { readZoneFile, sortFeatures, type LoadedZone } from "./files.js";
import {
  checkZonesLocally,
  editableGeometry,
  emptyForm,
  formFromProperties,
  groupIssues,
  hasCalibration,
  lineThrough,
  nextZoneName,
  rectangleAround,
  zoneSetBody,
  type Issue,
  type SetOptions,
  type ZoneForm,
  type ZoneKind,
} from "./model.js";
import { zoneItem, type EditorZone, type ZoneItem } from "./zone-form.js";

/** Kept for the tab's lifetime only, like the API key: typed once per session. */
const EMAIL_STORAGE = "streetflow.loginEmail";

interface Zone extends EditorZone {
  /** The last known shape; drawn shapes are read back from the map before saving or leaving the tab. */
  geometry: Geometry;
}

const TOOL_HINTS: Record<DrawTool, string> = {
  polygon:
    "Click the map to add corners; click the first corner (or press Enter) to finish, Escape to cancel.",
  linestring: "Click the map to add points; click the last point again (or press Enter) to finish.",
  select: "Click a zone to select it, then drag it or its corners; the Delete key removes it.",
};

const plural = (n: number, word: string) => `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`;

function editorUi() {
  return {
    panel: byId<HTMLElement>("panel-zone-sets"),
    start: byId<HTMLElement>("zone-editor-start"),
    newButton: byId<HTMLButtonElement>("zone-set-new"),
    result: byId<HTMLElement>("zone-editor-result"),
    form: byId<HTMLFormElement>("zone-editor"),
    messages: byId<HTMLElement>("zone-editor-messages"),
    name: byId<HTMLInputElement>("zone-editor-name"),
    email: byId<HTMLInputElement>("zone-editor-email"),
    kind: byId<HTMLFieldSetElement>("zone-editor-kind"),
    kindHint: byId<HTMLElement>("zone-editor-kind-hint"),
    calibration: byId<HTMLInputElement>("zone-editor-calibration"),
    file: byId<HTMLInputElement>("zone-editor-file"),
    fileStatus: byId<HTMLElement>("zone-editor-file-status"),
    zonesHeading: byId<HTMLElement>("zone-editor-zones-heading"),
    empty: byId<HTMLElement>("zone-editor-empty"),
    list: byId<HTMLOListElement>("zone-editor-zones"),
    save: byId<HTMLButtonElement>("zone-editor-save"),
    cancel: byId<HTMLButtonElement>("zone-editor-cancel"),
    status: byId<HTMLElement>("zone-editor-status"),
  };
}

/** The drawing tools laid over the map while the editor is open and its tab in front. */
function drawingToolbar() {
  const draw = el("button", { type: "button", attrs: { "aria-pressed": "false" } });
  const select = el("button", { type: "button", attrs: { "aria-pressed": "false" } }, "Select and edit");
  const centre = el("button", { type: "button" });
  const hint = el("p", { className: "hint", attrs: { "aria-live": "polite" } });
  const bar = el(
    "div",
    {
      className: "zone-draw-toolbar",
      hidden: true,
      attrs: { role: "group", "aria-label": "Zone drawing tools" },
    },
    el("div", { className: "zone-draw-buttons" }, draw, select, centre),
    hint,
  );
  byId("map-area").append(bar);
  return { bar, draw, select, centre, hint };
}

export class ZoneEditor {
  private readonly ui = editorUi();
  private readonly toolbar = drawingToolbar();
  private readonly drawing: ZoneDrawing;
  private zones: Zone[] = [];
  private items = new Map<string, ZoneItem>();
  private isOpen = false;
  private inFront = true;
  private tool: DrawTool = "polygon";
  /** Terra Draw adds its layers at once, which the map refuses before its style has loaded. */
  private mapLoaded = false;

  constructor(private readonly ctx: AppContext) {
    // Made with the map, so its one "load" event is still to come.
    void ctx.map.map.once("load").then(() => {
      this.mapLoaded = true;
      if (this.isOpen && this.inFront) this.showTools();
    });
    this.drawing = new ZoneDrawing(ctx.map.map, {
      created: (key, geometry) => this.onDrawn(key, geometry),
      deleted: (keys) => keys.forEach((key) => this.removeZone(key)),
      selected: (key) => this.markSelected(key),
    });
    this.wireControls();
  }

  /** The tab came to the front: the drawing tools return with the zones being edited. */
  activate(): void {
    this.inFront = true;
    if (this.isOpen) this.showTools();
  }

  /** The tab left: the drawing layers leave the map; the zones stay in the editor. */
  deactivate(): void {
    this.inFront = false;
    this.hideTools();
  }

  private get options(): SetOptions {
    const kind = this.ui.kind.querySelector<HTMLInputElement>("input:checked")?.value as ZoneKind;
    return { kind, withCalibration: this.ui.calibration.checked };
  }

  private wireControls(): void {
    const { ui, toolbar } = this;
    ui.newButton.addEventListener("click", () => this.open());
    ui.cancel.addEventListener("click", () => this.cancel());
    ui.form.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.save();
    });
    ui.kind.addEventListener("change", () => {
      this.useTool(this.options.kind === "polygon" ? "polygon" : "linestring");
      this.refreshItems();
    });
    ui.calibration.addEventListener("change", () => this.refreshItems());
    ui.file.addEventListener("change", () => {
      const file = ui.file.files?.[0];
      if (file) void this.loadFile(file);
    });
    toolbar.draw.addEventListener("click", () =>
      this.useTool(this.options.kind === "polygon" ? "polygon" : "linestring"),
    );
    toolbar.select.addEventListener("click", () => this.useTool("select"));
    toolbar.centre.addEventListener("click", () => this.addAtCentre());
    window.addEventListener("beforeunload", (e) => {
      if (this.isOpen && this.zones.length > 0) e.preventDefault();
    });
  }

  private open(): void {
    const { ui } = this;
    this.isOpen = true;
    this.zones = [];
    this.items.clear();
    ui.form.reset();
    // The signed-in user's (or the organization's only user's) e-mail; else the one typed last time.
    ui.email.value = this.ctx.userEmail ?? sessionStorage.getItem(EMAIL_STORAGE) ?? "";
    for (const status of [ui.status, ui.fileStatus, ui.result]) setStatus(status, "");
    this.clearIssues();
    this.renderZones();
    ui.form.hidden = false;
    ui.panel.classList.add("zone-editing");
    this.tool = "polygon";
    if (this.inFront) this.showTools();
    ui.name.focus();
  }

  private close(): void {
    this.isOpen = false;
    this.hideTools();
    this.zones = [];
    this.items.clear();
    this.ui.list.replaceChildren();
    this.ui.form.hidden = true;
    this.ui.panel.classList.remove("zone-editing");
  }

  private cancel(): void {
    const n = this.zones.length;
    if (n > 0 && !window.confirm(`Discard the new zone set and its ${plural(n, "zone")}?`)) return;
    this.close();
    this.ui.newButton.focus();
  }

  private showTools(): void {
    if (!this.mapLoaded || this.drawing.started) return;
    const drawn = this.zones.filter((z) => z.editable);
    const refused = new Set(
      this.drawing.start(drawn.map((z) => ({ key: z.key, geometry: z.geometry as EditableGeometry }))),
    );
    for (const zone of drawn) if (refused.has(zone.key)) zone.editable = false;
    this.drawing.showFixed(this.zones.filter((z) => !z.editable));
    this.drawing.markFaults(this.faultyKeys());
    this.toolbar.bar.hidden = false;
    document.body.classList.add("zone-drawing");
    this.useTool(this.tool);
  }

  private hideTools(): void {
    if (!this.drawing.started) return;
    this.readShapes();
    this.drawing.stop();
    this.toolbar.bar.hidden = true;
    document.body.classList.remove("zone-drawing");
  }

  /** Drawn shapes may have been edited on the map since they were drawn. */
  private readShapes(): void {
    for (const zone of this.zones)
      if (zone.editable) zone.geometry = this.drawing.geometry(zone.key) ?? zone.geometry;
  }

  private useTool(tool: DrawTool): void {
    const { toolbar } = this;
    const polygons = this.options.kind === "polygon";
    this.tool = tool === "select" ? tool : polygons ? "polygon" : "linestring";
    this.drawing.setTool(this.tool);
    toolbar.draw.textContent = polygons ? "Draw polygon" : "Draw line";
    toolbar.centre.textContent = polygons ? "Add rectangle at map centre" : "Add line at map centre";
    toolbar.draw.setAttribute("aria-pressed", String(this.tool !== "select"));
    toolbar.select.setAttribute("aria-pressed", String(this.tool === "select"));
    toolbar.hint.textContent = TOOL_HINTS[this.tool];
  }

  // ---- zones ----

  private addZone(geometry: Geometry, form: ZoneForm, key = newZoneKey()): Zone {
    const shape = editableGeometry(geometry);
    const zone: Zone = { key, form, issues: [], editable: shape !== null, geometry: shape ?? geometry };
    if (zone.editable && this.drawing.started && !this.drawing.has(key))
      zone.editable = this.drawing.add(zone.geometry as EditableGeometry, key);
    this.zones.push(zone);
    this.ui.list.append(this.itemOf(zone, this.zones.length - 1).item);
    this.updateCount();
    return zone;
  }

  private onDrawn(key: string, geometry: EditableGeometry): void {
    const zone = this.addZone(geometry, emptyForm(nextZoneName(this.zones.map((z) => z.form))), key);
    this.items.get(zone.key)?.open();
    setStatus(this.ui.status, `${zone.form.name} added: name it and set its properties in the list.`);
  }

  /** A rectangle (or a line) a fifth of the view wide at the map centre, selected for editing. */
  private addAtCentre(): void {
    const map = this.ctx.map.map;
    const bounds = map.getBounds();
    const centre = map.getCenter();
    const [halfWidth, halfHeight] = [
      (bounds.getEast() - bounds.getWest()) / 10,
      (bounds.getNorth() - bounds.getSouth()) / 10,
    ];
    const geometry =
      this.options.kind === "polygon"
        ? rectangleAround([centre.lng, centre.lat], halfWidth, halfHeight)
        : lineThrough([centre.lng, centre.lat], halfWidth);
    const zone = this.addZone(geometry, emptyForm(nextZoneName(this.zones.map((z) => z.form))));
    this.drawing.select(zone.key);
    this.items.get(zone.key)?.open();
    this.items.get(zone.key)?.focusName();
  }

  private removeZone(key: string): void {
    const index = this.zones.findIndex((z) => z.key === key);
    if (index < 0) return;
    this.zones.splice(index, 1);
    this.drawing.remove(key);
    // Indexes after it move up: the list is renumbered, as the API will number the zones.
    this.renderZones();
  }

  private zoomTo(zone: Zone): void {
    this.readShapes();
    const box = bboxOf(zone.geometry);
    if (box) this.ctx.map.map.fitBounds(box, { padding: 64, maxZoom: 17 });
    this.drawing.select(zone.key);
  }

  private markSelected(key: string | null): void {
    for (const item of this.ui.list.querySelectorAll("li.selected")) item.classList.remove("selected");
    if (key === null) return;
    const item = this.items.get(key);
    if (!item) return;
    item.item.classList.add("selected");
    item.open();
    item.item.scrollIntoView({ block: "nearest" });
  }

  private itemOf(zone: Zone, index: number): ZoneItem {
    const item = zoneItem(zone, index, this.options, {
      opened: (z) => this.drawing.select(z.key),
      zoomTo: (z) => this.zoomTo(z as Zone),
      remove: (z) => {
        this.removeZone(z.key);
        setStatus(this.ui.status, `${z.form.name.trim() || "The zone"} was deleted.`);
      },
    });
    this.items.set(zone.key, item);
    return item;
  }

  private renderZones(): void {
    this.items.clear();
    this.ui.list.replaceChildren(...this.zones.map((zone, i) => this.itemOf(zone, i).item));
    this.updateCount();
  }

  private refreshItems(): void {
    for (const item of this.items.values()) item.refresh(this.options);
  }

  private updateCount(): void {
    const n = this.zones.length;
    this.ui.zonesHeading.textContent = `Zones (${n.toLocaleString()})`;
    this.ui.empty.hidden = n > 0;
    // A set holds one kind of zone: the kind is fixed once it has zones.
    for (const radio of this.ui.kind.querySelectorAll("input")) radio.disabled = n > 0;
    this.ui.kindHint.hidden = n === 0;
  }

  // ---- files ----

  private async loadFile(file: File): Promise<void> {
    const { ui } = this;
    setStatus(ui.fileStatus, `Reading ${file.name}…`, "loading");
    try {
      const features = await readZoneFile(file.name, await file.arrayBuffer());
      const sorted = sortFeatures(features, this.zones.length > 0 ? this.options.kind : null);
      this.takeLoaded(sorted.kind, sorted.zones);
      if (ui.name.value.trim() === "") ui.name.value = file.name.replace(/\.[^.]+$/, "").slice(0, 50);
      const loaded = `Loaded ${plural(sorted.zones.length, "zone")} from ${file.name}.`;
      setStatus(ui.fileStatus, sorted.skipped ? `${loaded} ${sorted.skipped}` : loaded);
    } catch (err) {
      setStatus(ui.fileStatus, messageOf(err), "error");
    } finally {
      ui.file.value = ""; // the same file may be chosen again after fixing it
    }
  }

  private takeLoaded(kind: ZoneKind, loaded: LoadedZone[]): void {
    this.ui.kind.querySelector<HTMLInputElement>(`input[value="${kind}"]`)!.checked = true;
    if (loaded.some((z) => hasCalibration(z.properties))) this.ui.calibration.checked = true;
    this.useTool(this.tool);
    for (const zone of loaded) this.addZone(zone.geometry, formFromProperties(zone.properties));
    this.drawing.showFixed(this.zones.filter((z) => !z.editable));
    this.refreshItems();
    const boxes = loaded.map((z) => bboxOf(z.geometry)).filter((b) => b !== null);
    if (boxes.length > 0)
      this.ctx.map.map.fitBounds(
        [
          Math.min(...boxes.map((b) => b[0])),
          Math.min(...boxes.map((b) => b[1])),
          Math.max(...boxes.map((b) => b[2])),
          Math.max(...boxes.map((b) => b[3])),
        ],
        { padding: 48, maxZoom: 17 },
      );
  }

  // ---- saving ----

  private checkSetLocally(): Issue[] {
    const issues: Issue[] = [];
    if (this.ui.email.value.trim() === "")
      issues.push({ field: "insight_login_email", message: "Enter your login e-mail." });
    if (this.zones.length === 0) issues.push({ field: "zones", message: "Draw or load at least one zone." });
    return issues;
  }

  private async save(): Promise<void> {
    const { ui } = this;
    this.readShapes();
    this.clearIssues();
    const options = this.options;
    const local = [
      ...this.checkSetLocally(),
      ...checkZonesLocally(
        this.zones.map((z) => z.form),
        options,
      ),
    ];
    if (local.length > 0) {
      this.showIssues(local);
      setStatus(
        ui.status,
        `Nothing was sent: ${plural(local.length, "problem")} to fix, marked above.`,
        "error",
      );
      return;
    }
    const body = zoneSetBody({ ...options, name: ui.name.value, email: ui.email.value, zones: this.zones });
    ui.save.disabled = true;
    setStatus(ui.status, "Saving the zone set…", "loading");
    try {
      const created = await createZoneSet(this.ctx.api, body);
      sessionStorage.setItem(EMAIL_STORAGE, body.insight_login_email);
      const count = this.zones.length;
      this.close();
      setStatus(ui.result, `Zone set "${created.name}" saved with ${plural(count, "zone")}.`);
      this.ctx.events.emit("zone-sets-changed", undefined);
      this.ctx.events.emit("zone-set-created", created.uuid);
      ui.newButton.focus();
    } catch (err) {
      const issues = issuesOf(err);
      if (!issues) return this.ctx.showError(ui.status, "Saving failed", err);
      this.showIssues(issues);
      const what = issues.length === 1 ? "a problem" : `${plural(issues.length, "problem")}`;
      setStatus(
        ui.status,
        `The server refused the zone set (${what}, marked above); nothing was saved.`,
        "error",
      );
    } finally {
      ui.save.disabled = false;
    }
  }

  private faultyKeys(): Set<string> {
    return new Set(this.zones.filter((z) => z.issues.length > 0).map((z) => z.key));
  }

  /** Each zone's problems beside it (its form opened), set fields' beside them, the rest at the top. */
  private showIssues(issues: Issue[]): void {
    const grouped = groupIssues(issues);
    this.zones.forEach((zone, i) => (zone.issues = grouped.byZone.get(i) ?? []));
    const setFields: Record<string, HTMLElement> = {
      zone_set_name: byId("zone-editor-name-error"),
      insight_login_email: byId("zone-editor-email-error"),
    };
    const general: string[] = [];
    for (const issue of grouped.general) {
      const error = setFields[issue.field];
      if (error) {
        error.textContent = issue.message;
        error.closest(".zone-set-field")?.querySelector("input")?.setAttribute("aria-invalid", "true");
      } else general.push(issue.message);
    }
    if (general.length > 0)
      this.ui.messages.replaceChildren(el("ul", {}, ...general.map((m) => el("li", {}, m))));
    this.refreshItems();
    for (const zone of this.zones) if (zone.issues.length > 0) this.items.get(zone.key)?.open();
    this.drawing.markFaults(this.faultyKeys());
  }

  private clearIssues(): void {
    this.ui.messages.replaceChildren();
    for (const id of ["zone-editor-name-error", "zone-editor-email-error"]) byId(id).textContent = "";
    for (const input of this.ui.form.querySelectorAll(".zone-set-field input[aria-invalid]"))
      input.removeAttribute("aria-invalid");
    for (const zone of this.zones) zone.issues = [];
    this.refreshItems();
    this.drawing.markFaults(new Set());
  }
}
