import type { AppContext, View } from "../context.js";

/** The "Counts" tab: traffic volumes of road segments around a place. */
export function countsView(_ctx: AppContext): View {
  return { id: "counts" };
}
