import type { AnalysisEntry } from "../api.js";
import type { AppContext, View } from "../context.js";
import { byId, el, setStatus } from "../ui.js";
import { AnalysesApi } from "./analyses/api.js";
import { AnalysisDetailPanel, statusSlug, statusText } from "./analyses/detail.js";
import { analysisForm } from "./analyses/form.js";
import { AnalysisResults } from "./analyses/results.js";

/** The list is polled while the page is visible: faster while an analysis is computing. */
const POLL_MS = 5_000;
const POLL_PROCESSING_MS = 2_000;

/**
 * The "Analyses" tab: the organization's analyses with their live status, the "New analysis" form, the
 * opened analysis (parameters, downloads, cancel/delete) and its flow map with table and chart.
 */
export function analysesView(ctx: AppContext): View {
  const status = byId<HTMLElement>("analysis-status");
  const table = byId<HTMLTableElement>("analysis-table");
  const body = byId<HTMLTableSectionElement>("analysis-rows");
  const newButton = byId<HTMLButtonElement>("analysis-new");
  const tagFilter = byId<HTMLSelectElement>("analysis-tag-filter");
  const api = new AnalysesApi(ctx.api);
  const results = new AnalysisResults(ctx, api);
  let entries: AnalysisEntry[] = [];

  const detail = new AnalysisDetailPanel(ctx, api, {
    showFlows: (d) => void results.open(d),
    closed: (uuid) => {
      if (results.openUuid === uuid) results.close();
      markOpen();
      body.querySelector<HTMLButtonElement>(`button[data-uuid="${uuid}"]`)?.focus();
    },
  });
  const form = analysisForm(
    ctx,
    api,
    (uuid) => void openAnalysis(uuid),
    () => {
      newButton.setAttribute("aria-expanded", "false");
      newButton.focus();
    },
  );
  byId("analysis-form-area").append(form.element);
  byId("analysis-detail-area").append(detail.element);

  newButton.addEventListener("click", () => {
    const opening = form.element.hidden;
    if (opening) form.open();
    else form.close();
    newButton.setAttribute("aria-expanded", String(opening));
  });

  const openAnalysis = async (uuid: string) => {
    if (results.openUuid && results.openUuid !== uuid) results.close();
    await detail.open(uuid);
    markOpen();
  };

  const markOpen = () => {
    for (const button of body.querySelectorAll<HTMLButtonElement>("button[data-uuid]"))
      if (button.dataset.uuid === detail.uuid) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
  };

  const row = (a: AnalysisEntry): HTMLTableRowElement => {
    const open = el("button", { type: "button", className: "link", dataset: { uuid: a.uuid } }, a.name);
    open.addEventListener("click", () => void openAnalysis(a.uuid));
    const badge = el("td", { className: "badge", dataset: { status: statusSlug(a.status) } }, statusText(a));
    if (a.failure_reason) badge.title = a.failure_reason;
    const tags = el(
      "ul",
      { className: "tag-chips" },
      ...a.tags.map((t) => el("li", { className: "tag-chip" }, t)),
    );
    return el(
      "tr",
      {},
      el("td", {}, open),
      el("td", {}, a.analysis_type.replace(/_/g, " ")),
      badge,
      el("td", {}, tags),
    );
  };

  /** The filter offers the organization's tags; the chosen one stays chosen while it exists. */
  let tagNames = "";
  const refreshTags = async () => {
    const names = (await api.tags().catch(() => [])).map((t) => t.tag_name);
    if (names.join("\n") === tagNames) return;
    tagNames = names.join("\n");
    const chosen = tagFilter.value;
    tagFilter.replaceChildren(
      el("option", { value: "" }, "All analyses"),
      ...names.map((n) => el("option", { value: n, selected: n === chosen }, n)),
    );
  };
  tagFilter.addEventListener("change", () => void refresh());

  let timer: number | undefined;
  const refresh = async () => {
    window.clearTimeout(timer);
    try {
      // Only the chosen network's analyses: the zone sets and periods of another do not apply here.
      const country = ctx.currentNetwork()?.country;
      const tag = tagFilter.value;
      entries = (await ctx.api.listAnalyses(tag || undefined)).filter(
        (a) => !country || a.country === country,
      );
      void refreshTags();
      table.hidden = entries.length === 0;
      const focused =
        document.activeElement instanceof HTMLElement ? document.activeElement.dataset.uuid : undefined;
      body.replaceChildren(...entries.map(row));
      // Rows are rebuilt on every poll; the keyboard user's place survives it.
      if (focused) body.querySelector<HTMLButtonElement>(`button[data-uuid="${focused}"]`)?.focus();
      markOpen();
      const open = entries.find((a) => a.uuid === detail.uuid);
      if (open) detail.update(open);
      const time = new Date().toLocaleTimeString();
      const none = tag ? `No analyses tagged ${tag}` : "No analyses yet";
      setStatus(status, entries.length === 0 ? `${none} (checked ${time}).` : `Updated ${time}.`);
    } catch (err) {
      ctx.showError(status, "Analyses failed to load", err);
    }
    const computing = entries.some((a) => a.status === "Processing");
    timer = window.setTimeout(poll, computing ? POLL_PROCESSING_MS : POLL_MS);
  };
  const poll = () => {
    if (document.hidden) timer = window.setTimeout(poll, POLL_MS);
    else void refresh();
  };

  setStatus(status, "Loading analyses…", "loading");
  void refresh();
  ctx.events.on("analyses-changed", () => void refresh());
  ctx.events.on("network-changed", () => void refresh());
  return {
    id: "analyses",
    activate: () => results.setActive(true),
    deactivate: () => results.setActive(false),
  };
}
