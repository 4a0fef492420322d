/** One analysis opened from the list: live status, parameters, metric downloads, cancel and delete. */
import type { AnalysisEntry } from "../../api.js";
import type { AppContext } from "../../context.js";
import { el, setStatus, statusLine } from "../../ui.js";
import type { AnalysesApi, AnalysisDetail } from "./api.js";
import { TRAVEL_MODES } from "./form-logic.js";
import { OD_METRICS } from "./flows.js";
import { resultUnit } from "./units.js";

/** The words a status badge shows: `Processing 40 %` while running. */
export function statusText(a: Pick<AnalysisEntry, "status" | "progress">): string {
  return a.status === "Processing" ? `Processing ${Math.round(a.progress * 100)} %` : a.status;
}

export const statusSlug = (status: string) => status.toLowerCase().replace(/\s+/g, "-");

const FINISHED = ["Data Available", "Failed", "Cancelled"];

/** Offers the text as a file the browser saves, with the server's file name. */
function saveFile(content: string | Blob, filename: string): void {
  const blob =
    typeof content === "string" ? new Blob([content], { type: "text/csv;charset=utf-8" }) : content;
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // After the click the browser holds its own reference; the URL can go once the event loop moves on.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "–");

export interface DetailCallbacks {
  /** The user asked for the flow map of this analysis. */
  showFlows: (detail: AnalysisDetail) => void;
  /** The detail was closed, or its analysis deleted. */
  closed: (uuid: string) => void;
}

export class AnalysisDetailPanel {
  readonly element = el("section", {
    className: "analysis-detail",
    hidden: true,
    attrs: { "aria-labelledby": "analysis-detail-heading" },
  });
  private readonly heading = el("h3", { id: "analysis-detail-heading", tabIndex: -1 });
  private readonly badge = el("p", { className: "badge", attrs: { "aria-live": "polite" } });
  private readonly params = el("dl", { className: "params" });
  private readonly tags = el("div", { className: "tags" });
  private readonly metrics = el("div", { className: "metrics" });
  private readonly actions = el("div", { className: "detail-actions" });
  private readonly status = statusLine();
  private detail: AnalysisDetail | null = null;
  private loadId = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly api: AnalysesApi,
    private readonly on: DetailCallbacks,
  ) {
    const close = el("button", { type: "button" }, "Close");
    close.addEventListener("click", () => this.close());
    this.element.append(
      el("div", { className: "detail-head" }, this.heading, close),
      this.badge,
      this.params,
      this.tags,
      this.metrics,
      this.actions,
      this.status,
    );
  }

  get uuid(): string | null {
    return this.element.hidden ? null : (this.detail?.uuid ?? null);
  }

  async open(uuid: string): Promise<void> {
    const load = ++this.loadId;
    this.element.hidden = false;
    this.detail = null;
    this.heading.textContent = "Analysis";
    this.params.replaceChildren();
    this.tags.replaceChildren();
    this.metrics.replaceChildren();
    this.actions.replaceChildren();
    setStatus(this.status, "Loading the analysis…", "loading");
    this.heading.focus();
    try {
      const detail = await this.api.detail(uuid);
      if (load !== this.loadId) return;
      this.detail = detail;
      setStatus(this.status, "");
      this.render();
    } catch (err) {
      if (load === this.loadId) this.ctx.showError(this.status, "The analysis failed to load", err);
    }
  }

  /** A newer list entry of the open analysis: status, progress and metrics move on without a reload. */
  update(entry: AnalysisEntry): void {
    if (!this.detail || entry.uuid !== this.detail.uuid) return;
    const changed =
      entry.status !== this.detail.status || entry.metrics.length !== this.detail.metrics.length;
    this.detail = { ...this.detail, ...entry };
    if (changed) this.render();
    else this.renderBadge();
  }

  close(): void {
    const uuid = this.detail?.uuid;
    this.loadId++;
    this.element.hidden = true;
    this.detail = null;
    if (uuid) this.on.closed(uuid);
  }

  private render(): void {
    const d = this.detail!;
    this.heading.textContent = d.name;
    this.renderBadge();
    const mode = TRAVEL_MODES.find((m) => m.value === d.travel_mode_type)?.label ?? d.travel_mode_type;
    const rows: [string, string][] = [
      ["Type", d.analysis_type.replace(/_/g, " ")],
      ["Travel mode", mode],
      ["Output", `${d.output_type}: ${resultUnit(d.output_type)}`],
      ["Origin zone sets", d.oz_sets.map((s) => s.name).join(", ")],
      ["Destination zone sets", d.dz_sets.map((s) => s.name).join(", ")],
      ["Date ranges", d.date_ranges.map((r) => `${r.start_date} – ${r.end_date}`).join(", ")],
      ["Day types", d.day_types.map((t) => t.label.replace(/^\d+: /, "")).join(", ")],
      ["Day parts", d.day_parts.map((t) => t.label.replace(/^\d+: /, "")).join(", ")],
      ["Created", when(d.created_at)],
      ["Finished", when(d.finished_at)],
    ];
    this.params.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
    this.renderTags(d);
    this.renderMetrics(d);
    this.renderActions(d);
  }

  /** The analysis' tags as chips with a remove button, and a field that adds one (new names are created). */
  private renderTags(d: AnalysisDetail): void {
    const chips = el("ul", { className: "tag-chips", attrs: { "aria-label": "Tags" } });
    for (const tag of d.tags) {
      const remove = el("button", { type: "button", attrs: { "aria-label": `Remove tag ${tag}` } }, "×");
      remove.addEventListener(
        "click",
        () => void this.changeTags(`Removing tag ${tag}`, (email) => this.api.untag(d.uuid, email, tag)),
      );
      chips.append(el("li", { className: "tag-chip" }, tag, remove));
    }
    const input = el("input", {
      type: "text",
      id: "analysis-tag-input",
      autocomplete: "off",
      maxLength: 100,
    });
    const known = el("datalist", { id: "analysis-tag-names" });
    input.setAttribute("list", known.id);
    void this.api.tags().then(
      (tags) => known.replaceChildren(...tags.map((t) => el("option", { value: t.tag_name }))),
      () => undefined, // Suggestions only: adding still works without them.
    );
    const add = el("button", { type: "submit" }, "Add tag");
    const form = el(
      "form",
      { className: "tag-add" },
      el("label", { htmlFor: input.id }, "Add a tag"),
      input,
      known,
      add,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const tag = input.value.trim();
      if (!tag) return;
      void this.changeTags(`Adding tag ${tag}`, async (email) => {
        // A name the organization lacks is created first, as the vendor's clients do.
        const existing = (await this.api.tags()).some((t) => t.tag_name.toLowerCase() === tag.toLowerCase());
        if (!existing) await this.api.createTag(email, tag);
        await this.api.tag(d.uuid, email, tag);
      });
    });
    this.tags.replaceChildren(
      el("h4", {}, "Tags"),
      d.tags.length ? chips : el("p", { className: "hint" }, "No tags."),
      form,
    );
  }

  /** Runs a tag change; the server's refusal (a viewer's 403, a bad name) is shown as the server says it. */
  private async changeTags(what: string, run: (email: string) => Promise<unknown>): Promise<void> {
    const email = this.ctx.userEmail;
    const d = this.detail;
    if (!d) return;
    if (!email) return setStatus(this.status, "Sign in with your e-mail to change tags.", "error");
    setStatus(this.status, `${what}…`, "loading");
    try {
      await run(email);
      this.ctx.events.emit("analyses-changed", undefined);
      await this.open(d.uuid);
      setStatus(
        this.status,
        `${what.replace(/^(Adding|Removing)/, (w) => (w === "Adding" ? "Added" : "Removed"))}.`,
      );
    } catch (err) {
      this.ctx.showError(this.status, `${what} failed`, err);
    }
  }

  private renderBadge(): void {
    const d = this.detail!;
    this.badge.textContent = statusText(d);
    this.badge.dataset.status = statusSlug(d.status);
    this.badge.title = d.failure_reason ?? "";
    if (d.failure_reason) this.badge.textContent = `${d.status}: ${d.failure_reason}`;
  }

  private renderMetrics(d: AnalysisDetail): void {
    if (d.status !== "Data Available") {
      this.metrics.replaceChildren();
      return;
    }
    const list = el("ul", { className: "metric-list" });
    for (const metric of d.metrics) {
      const button = el(
        "button",
        { type: "button", attrs: { "aria-label": `Download ${metric} CSV` } },
        "Download",
      );
      button.addEventListener("click", () => void this.download(d, metric, button));
      list.append(el("li", {}, el("code", {}, metric), button));
    }
    const shapefiles = el("ul", { className: "metric-list" });
    for (const shapefile of d.shapefiles ?? []) {
      const button = el(
        "button",
        { type: "button", attrs: { "aria-label": `Download ${shapefile} shapefile` } },
        "Download",
      );
      button.addEventListener("click", () => void this.downloadShapefile(d, shapefile, button));
      shapefiles.append(el("li", {}, el("code", {}, shapefile), button));
    }
    const routes = d.shapefiles?.includes("top_routes") ?? false;
    const mapButton = el(
      "button",
      { type: "button", className: "primary" },
      routes ? "Show routes map" : "Show flow map",
    );
    mapButton.addEventListener("click", () => this.on.showFlows(d));
    const mappable = routes || d.metrics.some((m) => OD_METRICS.includes(m));
    this.metrics.replaceChildren(
      el("h4", {}, "Results"),
      mappable ? mapButton : "",
      el("p", { className: "hint" }, "Metric CSVs:"),
      list,
      d.shapefiles?.length ? el("p", { className: "hint" }, "Shapefiles (zip):") : "",
      d.shapefiles?.length ? shapefiles : "",
    );
  }

  private async downloadShapefile(d: AnalysisDetail, name: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    setStatus(this.status, `Downloading ${name}…`, "loading");
    try {
      const { blob, filename } = await this.api.shapefile(d.uuid, name);
      saveFile(blob, filename ?? `${d.name}_${name}.zip`);
      setStatus(this.status, `${name} downloaded.`);
    } catch (err) {
      this.ctx.showError(this.status, `${name} failed to download`, err);
    } finally {
      button.disabled = false;
    }
  }

  private async download(d: AnalysisDetail, metric: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    setStatus(this.status, `Downloading ${metric}…`, "loading");
    try {
      const { text, filename } = await this.api.metric(d.uuid, metric);
      saveFile(text, filename ?? `${d.name}_${metric}.csv`);
      setStatus(this.status, `${metric} downloaded.`);
    } catch (err) {
      this.ctx.showError(this.status, `${metric} failed to download`, err);
    } finally {
      button.disabled = false;
    }
  }

  private renderActions(d: AnalysisDetail): void {
    const email = this.ctx.userEmail;
    const action = (
      text: string,
      run: (uuid: string, email: string) => Promise<unknown>,
      confirmText?: string,
    ) => {
      const button = el("button", { type: "button", className: "danger" }, text);
      button.addEventListener("click", async () => {
        if (!email) return setStatus(this.status, "Sign in with your e-mail to change analyses.", "error");
        if (confirmText && !window.confirm(confirmText)) return;
        button.disabled = true;
        setStatus(this.status, `${text}…`, "loading");
        try {
          await run(d.uuid, email);
          setStatus(this.status, "");
          this.ctx.events.emit("analyses-changed", undefined);
          if (text.startsWith("Delete")) this.close();
          else await this.open(d.uuid);
        } catch (err) {
          this.ctx.showError(this.status, `${text} failed`, err);
          button.disabled = false;
        }
      });
      return button;
    };
    this.actions.replaceChildren(
      d.status === "Processing" ? action("Cancel analysis", (u, e) => this.api.cancel(u, e)) : "",
      FINISHED.includes(d.status)
        ? action("Delete analysis", (u, e) => this.api.remove(u, e), `Delete "${d.name}" and its results?`)
        : "",
    );
  }
}
