import type { NetworkInfo } from "../api.js";
import type { AppContext } from "../context.js";
import { legendLabel, ROAD_LEGEND } from "../road-style.js";
import { byId, setStatus } from "../ui.js";

/** The country selector, the road network on the map (following the viewport over the cap) and its legend. */
export async function setUpNetwork(ctx: AppContext, select: (n: NetworkInfo) => void): Promise<void> {
  const networkSelect = byId<HTMLSelectElement>("network-select");
  const status = byId<HTMLElement>("network-status");
  renderLegend(byId("legend"));
  const { networks, map } = ctx;
  networkSelect.replaceChildren(
    ...networks.map(
      (n) =>
        new Option(`${n.country.toUpperCase()} · ${n.segment_count.toLocaleString()} segments`, n.country),
    ),
  );
  if (networks.length === 0) {
    networkSelect.disabled = true;
    setStatus(status, "No road network is imported yet (streetflow import-osm).");
    return;
  }
  networkSelect.value = ctx.currentNetwork()?.country ?? networks[0].country;
  let followViewport = false;
  let latestRequest = 0;
  const show = async (network: NetworkInfo, bbox = network.bbox, fit = true) => {
    const request = ++latestRequest;
    setStatus(status, "Loading road segments…", "loading");
    try {
      const segments = await ctx.api.segments(network.country, bbox);
      // A slower earlier answer must not replace a newer view.
      if (request !== latestRequest) return;
      await map.showNetwork(segments, fit ? network.bbox : undefined);
      // Over the cap only the main roads came: fetch the viewport again as the user zooms in.
      followViewport = segments.truncated || followViewport;
      const shown = segments.features.length.toLocaleString();
      setStatus(
        status,
        segments.truncated
          ? `${shown} of ${segments.total.toLocaleString()} segments shown (main roads first); zoom in for more.`
          : `${shown} segments shown.`,
      );
    } catch (err) {
      ctx.showError(status, "Road network failed to load", err);
    }
  };
  const selected = () => networks.find((n) => n.country === networkSelect.value) ?? networks[0];
  networkSelect.addEventListener("change", () => {
    followViewport = false;
    select(selected());
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

function renderLegend(legend: HTMLElement): void {
  legend.replaceChildren(
    ...ROAD_LEGEND.map((style) => {
      const item = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch line";
      swatch.style.background = style.colour;
      swatch.style.height = `${Math.max(2, style.width)}px`;
      item.append(swatch, legendLabel(style));
      return item;
    }),
  );
}
