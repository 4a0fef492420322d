import type { NetworkInfo, ZoneSetSummary } from "../api.js";
import type { AppContext, View } from "../context.js";
import type { StreetMap } from "../map.js";
import { zoneSetOnNetwork } from "../networks.js";
import { byId, el, setStatus } from "../ui.js";
import { deleteZoneSet } from "./zone-editor/api.js";
import { ZoneEditor } from "./zone-editor/editor.js";

/** Most zone buttons listed per set; larger sets are explored on the map. */
const MAX_LISTED_ZONES = 300;

/**
 * The "Zone sets" tab: the organization's zone sets, each with a checkbox that draws it on the map and a
 * Delete button, and the editor that makes new ones.
 */
export function zoneSetsView(ctx: AppContext): View {
  const status = byId<HTMLElement>("zone-set-status");
  const list = byId<HTMLUListElement>("zone-set-list");
  let loading = Promise.resolve();
  const load = async () => {
    setStatus(status, "Loading zone sets…", "loading");
    try {
      const all = await ctx.api.listZoneSets();
      // The list shows the sets on the chosen network only.
      const network = ctx.currentNetwork();
      const sets = all.filter((set) => zoneSetOnNetwork(set, network));
      // Sets keep their entry (checkbox, colour, zone list) across a reload, so what the user shows stays
      // shown when a set is saved or deleted; only deleted sets leave the map.
      const previous = new Map(
        [...list.querySelectorAll<HTMLLIElement>("li[data-uuid]")].map((li) => [li.dataset.uuid!, li]),
      );
      const kept = new Set(sets.map((set) => set.uuid));
      for (const uuid of previous.keys()) if (!kept.has(uuid)) ctx.map.hideZoneSet(uuid);
      list.replaceChildren(...sets.map((set) => previous.get(set.uuid) ?? zoneSetItem(ctx, set)));
      setStatus(status, emptyListText(all.length, sets.length, network));
    } catch (err) {
      ctx.showError(status, "Zone sets failed to load", err);
    }
  };
  ctx.events.on("zone-sets-changed", () => (loading = load()));
  ctx.events.on("network-changed", () => (loading = load()));
  // A set just saved in the editor is drawn once the refreshed list has its checkbox.
  ctx.events.on("zone-set-created", async (uuid) => {
    await loading;
    const checkbox = list.querySelector<HTMLInputElement>(`#zone-set-${CSS.escape(uuid)}`);
    if (checkbox && !checkbox.checked) checkbox.click();
  });
  loading = load();
  const editor = new ZoneEditor(ctx);
  return {
    id: "zone-sets",
    activate: () => {
      ctx.map.setZoneSetsVisible(true);
      editor.activate();
    },
    deactivate: () => {
      ctx.map.setZoneSetsVisible(false);
      editor.deactivate();
    },
  };
}

function emptyListText(total: number, shown: number, network: NetworkInfo | undefined): string {
  if (shown > 0) return "";
  if (total === 0 || !network) return "No zone sets yet.";
  const others = `${total.toLocaleString()} on other networks`;
  return `No zone sets on the ${network.country.toUpperCase()} network yet (${others}).`;
}

function zoneSetItem(ctx: AppContext, set: ZoneSetSummary): HTMLLIElement {
  const checkbox = el("input", { type: "checkbox", id: `zone-set-${set.uuid}` });
  const swatch = el("span", { className: "swatch", attrs: { "aria-hidden": "true" } });
  const count = `${set.zone_count.toLocaleString()} ${set.geom_type} zone${set.zone_count === 1 ? "" : "s"}`;
  const label = el("label", { htmlFor: checkbox.id }, swatch, set.name, " ", el("small", {}, count));
  const status = el("span", { className: "status", attrs: { role: "status" } });
  const zoneList = el("details", { hidden: true });
  const remove = el(
    "button",
    { type: "button", className: "delete-set", attrs: { "aria-label": `Delete ${set.name}` } },
    "Delete",
  );
  const item = el("li", { dataset: { uuid: set.uuid } }, checkbox, label, remove, status, zoneList);
  remove.addEventListener("click", () => void deleteSet(ctx, set, remove, status));

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

/** Deletes a set after confirmation; the API refuses (409) while an analysis uses it, and says which. */
async function deleteSet(
  ctx: AppContext,
  set: ZoneSetSummary,
  button: HTMLButtonElement,
  status: HTMLElement,
) {
  if (!window.confirm(`Delete the zone set "${set.name}" and its ${set.zone_count.toLocaleString()} zones?`))
    return;
  button.disabled = true;
  setStatus(status, "Deleting…", "loading");
  try {
    await deleteZoneSet(ctx.api, set.uuid);
    ctx.events.emit("zone-sets-changed", undefined);
  } catch (err) {
    ctx.showError(status, "Not deleted", err);
    button.disabled = false;
  }
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
