/** One analysis opened from the list: live status, parameters, metric downloads, cancel and delete. */
import type { AnalysisEntry } from "../../api.js";
import type { AppContext } from "../../context.js";
import { el, setStatus, statusLine } from "../../ui.js";
import type { AnalysesApi, AnalysisDetail } from "./api.js";
import { TRAVEL_MODES } from "./form-logic.js";
import { OD_METRICS } from "./flows.js";

/** The words a status badge shows: `Processing 40 %` while running. */
export function statusText(a: Pick<AnalysisEntry, "status" | "progress">): string {
  return a.status === "Processing" ? `Processing ${Math.round(a.progress * 100)} %` : a.status;
}

export const statusSlug = (status: string) => status.toLowerCase().replace(/\s+/g, "-");

const FINISHED = ["Data Available", "Failed", "Cancelled"];

/** Offers the text as a file the browser saves, with the server's file name. */
function saveFile(text: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
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
      ["Output", d.output_type],
      ["Origin zone sets", d.oz_sets.map((s) => s.name).join(", ")],
      ["Destination zone sets", d.dz_sets.map((s) => s.name).join(", ")],
      ["Date ranges", d.date_ranges.map((r) => `${r.start_date} – ${r.end_date}`).join(", ")],
      ["Day types", d.day_types.map((t) => t.label.replace(/^\d+: /, "")).join(", ")],
      ["Day parts", d.day_parts.map((t) => t.label.replace(/^\d+: /, "")).join(", ")],
      ["Created", when(d.created_at)],
      ["Finished", when(d.finished_at)],
    ];
    this.params.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
    this.renderMetrics(d);
    this.renderActions(d);
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
    const mapButton = el("button", { type: "button", className: "primary" }, "Show flow map");
    mapButton.addEventListener("click", () => this.on.showFlows(d));
    const mappable = d.metrics.some((m) => OD_METRICS.includes(m));
    this.metrics.replaceChildren(
      el("h4", {}, "Results"),
      mappable ? mapButton : "",
      el("p", { className: "hint" }, "Metric CSVs:"),
      list,
    );
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
