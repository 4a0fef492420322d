import type { AnalysisEntry } from "../api.js";
import type { AppContext, View } from "../context.js";
import { byId, el, setStatus } from "../ui.js";

const ANALYSIS_POLL_MS = 5_000;

/** The "Analyses" tab: every analysis of the organization with its live status. */
export function analysesView(ctx: AppContext): View {
  const status = byId<HTMLElement>("analysis-status");
  const table = byId<HTMLTableElement>("analysis-table");
  const body = byId<HTMLTableSectionElement>("analysis-rows");
  const refresh = async () => {
    try {
      const analyses = await ctx.api.listAnalyses();
      table.hidden = analyses.length === 0;
      body.replaceChildren(...analyses.map(analysisRow));
      const time = new Date().toLocaleTimeString();
      setStatus(status, analyses.length === 0 ? `No analyses yet (checked ${time}).` : `Updated ${time}.`);
    } catch (err) {
      ctx.showError(status, "Analyses failed to load", err);
    }
  };
  setStatus(status, "Loading analyses…", "loading");
  void refresh();
  // Polled while the tab is visible, so statuses move from Processing to Data Available on their own.
  window.setInterval(() => {
    if (!document.hidden) void refresh();
  }, ANALYSIS_POLL_MS);
  ctx.events.on("analyses-changed", () => void refresh());
  return { id: "analyses" };
}

function analysisRow(a: AnalysisEntry): HTMLTableRowElement {
  const processing = a.status === "Processing";
  const status = el(
    "td",
    { className: "badge", dataset: { status: a.status.toLowerCase().replace(/\s+/g, "-") } },
    processing ? `Processing ${Math.round(a.progress * 100)} %` : a.status,
  );
  if (a.failure_reason) status.title = a.failure_reason;
  return el("tr", {}, el("td", {}, a.name), el("td", {}, a.analysis_type.replace(/_/g, " ")), status);
}
