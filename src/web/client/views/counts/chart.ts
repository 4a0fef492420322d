import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";
import { el, statusLine } from "../../ui.js";
import type { MonthMetrics } from "./api.js";

// Only what the chart uses, so the bundle leaves the rest of chart.js out.
Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Tooltip,
  Legend,
);

const MONTH_FORMAT = new Intl.DateTimeFormat("en", { month: "short", year: "numeric", timeZone: "UTC" });
/** "2026-06-01" → "Jun 2026" */
export const monthLabel = (yearMonth: string) => MONTH_FORMAT.format(new Date(`${yearMonth}T00:00:00Z`));

/**
 * A drawer over the bottom of the map with a segment's monthly volume (bars) and average speed (line), and
 * the same numbers as a table for screen readers and keyboard users.
 */
export class MonthlyDrawer {
  readonly element: HTMLElement;
  readonly status = statusLine();
  private readonly title = el("h2", { id: "counts-drawer-title" });
  private readonly canvas = el("canvas", { attrs: { role: "img" } });
  private readonly tableBody = el("tbody");
  private readonly table: HTMLTableElement;
  private readonly details: HTMLDetailsElement;
  private chart: Chart | null = null;

  constructor(onClose: () => void) {
    const close = el(
      "button",
      { type: "button", className: "close", ariaLabel: "Close the monthly chart" },
      "×",
    );
    close.addEventListener("click", onClose);
    this.table = el(
      "table",
      { className: "counts-table" },
      el("caption", {}, "Monthly counts"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, "Month"),
          el("th", { scope: "col", className: "num" }, "Expanded trips/day"),
          el("th", { scope: "col", className: "num" }, "Avg mph"),
        ),
      ),
      this.tableBody,
    );
    this.details = el("details", {}, el("summary", {}, "Data table"), this.table);
    this.element = el(
      "section",
      { className: "counts-drawer", hidden: true, attrs: { "aria-labelledby": this.title.id } },
      el("header", {}, this.title, close),
      this.status,
      el("div", { className: "chart-box" }, this.canvas),
      this.details,
    );
    this.element.addEventListener("keydown", (e) => {
      if (e.key === "Escape") onClose();
    });
  }

  setTitle(title: string): void {
    this.title.textContent = title;
  }

  setOpen(open: boolean): void {
    this.element.hidden = !open;
  }

  clear(): void {
    this.chart?.destroy();
    this.chart = null;
    this.tableBody.replaceChildren();
    this.canvas.removeAttribute("aria-label");
  }

  /** Draws the months with data (the API answers no row for a month without trips). */
  show(months: MonthMetrics[], subject: string): void {
    this.clear();
    const labels = months.map((m) => monthLabel(m.year_month));
    this.table.caption!.textContent = `Monthly counts of ${subject}`;
    this.tableBody.replaceChildren(
      ...months.map((m, i) =>
        el(
          "tr",
          {},
          el("th", { scope: "row" }, labels[i]),
          el("td", { className: "num" }, m.trips_volume.toLocaleString()),
          el("td", { className: "num" }, m.avg_speed === null ? "–" : m.avg_speed.toFixed(1)),
        ),
      ),
    );
    this.canvas.setAttribute(
      "aria-label",
      `Chart of average daily trips and speed of ${subject} over ${months.length} months; the data table below lists the values.`,
    );
    this.chart = new Chart(this.canvas, {
      data: {
        labels,
        datasets: [
          {
            type: "bar",
            label: "Trips per day",
            data: months.map((m) => m.trips_volume),
            backgroundColor: "#d73027",
            yAxisID: "volume",
            order: 2,
          },
          {
            type: "line",
            label: "Average speed (mph)",
            data: months.map((m) => m.avg_speed),
            borderColor: "#1f6feb",
            backgroundColor: "#1f6feb",
            yAxisID: "speed",
            spanGaps: true,
            order: 1,
          },
        ],
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: {
          volume: {
            type: "linear",
            position: "left",
            beginAtZero: true,
            title: { display: true, text: "trips/day" },
          },
          speed: {
            type: "linear",
            position: "right",
            beginAtZero: true,
            grid: { drawOnChartArea: false },
            title: { display: true, text: "mph" },
          },
        },
        plugins: { legend: { position: "bottom" } },
      },
    });
  }
}
