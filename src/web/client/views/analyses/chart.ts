/** The day-part bar chart. Only the chart.js parts it uses are registered, so the bundle leaves the rest out. */
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from "chart.js";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

/**
 * `Peak AM (6am-10am)` → ["Peak AM", "6am-10am"]: two-line category labels (chart.js takes arrays) fit
 * side by side where one line would have to be tilted.
 */
function twoLines(label: string): string[] {
  const m = /^(.*) \((.*)\)$/.exec(label);
  return m ? [m[1], m[2]] : [label];
}

export class DayPartChart {
  private readonly chart: Chart<"bar", number[], string>;

  constructor(canvas: HTMLCanvasElement) {
    this.chart = new Chart(canvas, {
      type: "bar",
      data: { labels: [], datasets: [{ label: "Trips per day", data: [], backgroundColor: "#e34a33" }] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { y: { beginAtZero: true, title: { display: true, text: "Trips per day" } } },
        plugins: { tooltip: { enabled: true } },
      },
    });
  }

  /** Bars in the given order; `unit` names the values (index or volume) in the axis title. */
  update(bars: { label: string; value: number }[], unit: string): void {
    this.chart.data.labels = bars.map((b) => twoLines(b.label)) as unknown as string[];
    this.chart.data.datasets[0].data = bars.map((b) => b.value);
    this.chart.data.datasets[0].label = unit;
    const y = this.chart.options.scales?.y as { title?: { text?: string } } | undefined;
    if (y?.title) y.title.text = unit;
    this.chart.update();
  }

  destroy(): void {
    this.chart.destroy();
  }
}
