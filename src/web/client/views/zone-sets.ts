import type { ZoneSetSummary } from "../api.js";
import type { AppContext, View } from "../context.js";
import type { StreetMap } from "../map.js";
import { byId, el, setStatus } from "../ui.js";

/** Most zone buttons listed per set; larger sets are explored on the map. */
const MAX_LISTED_ZONES = 300;

/** The "Zone sets" tab: the organization's zone sets, each with a checkbox that draws it on the map. */
export function zoneSetsView(ctx: AppContext): View {
  const status = byId<HTMLElement>("zone-set-status");
  const list = byId<HTMLUListElement>("zone-set-list");
  const load = async () => {
    setStatus(status, "Loading zone sets…", "loading");
    try {
      const sets = await ctx.api.listZoneSets();
      // Sets drawn before a reload are taken off the map: their checkboxes are new and unchecked.
      for (const item of list.querySelectorAll<HTMLElement>("li[data-uuid]"))
        ctx.map.hideZoneSet(item.dataset.uuid!);
      list.replaceChildren(...sets.map((set) => zoneSetItem(ctx, set)));
      setStatus(status, sets.length === 0 ? "No zone sets yet." : "");
    } catch (err) {
      ctx.showError(status, "Zone sets failed to load", err);
    }
  };
  ctx.events.on("zone-sets-changed", () => void load());
  void load();
  return { id: "zone-sets" };
}

function zoneSetItem(ctx: AppContext, set: ZoneSetSummary): HTMLLIElement {
  const checkbox = el("input", { type: "checkbox", id: `zone-set-${set.uuid}` });
  const swatch = el("span", { className: "swatch", attrs: { "aria-hidden": "true" } });
  const count = `${set.zone_count.toLocaleString()} ${set.geom_type} zone${set.zone_count === 1 ? "" : "s"}`;
  const label = el("label", { htmlFor: checkbox.id }, swatch, set.name, " ", el("small", {}, count));
  const status = el("span", { className: "status", attrs: { role: "status" } });
  const zoneList = el("details", { hidden: true });
  const item = el("li", { dataset: { uuid: set.uuid } }, checkbox, label, status, zoneList);

  checkbox.addEventListener("change", async () => {
    if (!checkbox.checked) {
      ctx.map.hideZoneSet(set.uuid);
      swatch.style.background = "";
      zoneList.hidden = true;
      return;
    }
    checkbox.disabled = true;
    setStatus(status, "Loading…", "loading");
    try {
      const zones = await ctx.api.zoneSet(set.uuid);
      swatch.style.background = await ctx.map.showZoneSet(set.uuid, zones);
      fillZoneList(zoneList, zones.features, ctx.map);
      setStatus(status, "");
    } catch (err) {
      checkbox.checked = false;
      ctx.showError(status, "Failed", err);
    } finally {
      checkbox.disabled = false;
    }
  });
  return item;
}

/** Zone names as buttons that show the zone on the map, so names are reachable without a mouse. */
function fillZoneList(details: HTMLDetailsElement, zones: GeoJSON.Feature[], map: StreetMap): void {
  const summary = el("summary", {}, `Zones (${zones.length.toLocaleString()})`);
  const list = el("ul", { className: "zone-names" });
  for (const zone of zones.slice(0, MAX_LISTED_ZONES)) {
    const button = el("button", { type: "button" }, String(zone.properties?.name ?? "(unnamed)"));
    button.addEventListener("click", () => map.focusZone(zone));
    list.append(el("li", {}, button));
  }
  if (zones.length > MAX_LISTED_ZONES)
    list.append(el("li", {}, `and ${(zones.length - MAX_LISTED_ZONES).toLocaleString()} more`));
  details.replaceChildren(summary, list);
  details.hidden = false;
}
