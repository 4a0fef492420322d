import type * as maplibregl from "maplibre-gl";

const STYLE_TIMEOUT_MS = 5_000;

/** The optional basemap of /config.json (STREETFLOW_BASEMAP_URL on the server). */
export interface Basemap {
  url: string;
  attribution: string | null;
  type: "raster" | "style";
}

/** The server's basemap setting; null when none is set or the settings cannot be read (offline default). */
export async function fetchBasemap(): Promise<Basemap | null> {
  try {
    const response = await fetch("config.json", { headers: { accept: "application/json" } });
    if (!response.ok) return null;
    return ((await response.json()) as { basemap?: Basemap | null }).basemap ?? null;
  } catch {
    return null;
  }
}

/**
 * Puts the basemap under every layer but the background: raster tiles as one layer, or a MapLibre style's
 * sources and layers (ids prefixed "basemap:") with its glyphs and sprite. Adding the style's parts to our
 * own style, rather than replacing the style, keeps the layers other views add. A basemap that fails to
 * load leaves the offline map as it is.
 */
export async function addBasemap(map: maplibregl.Map, basemap: Basemap | null): Promise<void> {
  if (!basemap) return;
  const beforeId = map.getStyle().layers.find((l) => l.id !== "background")?.id;
  const attribution = basemap.attribution ?? undefined;
  try {
    if (basemap.type === "raster") {
      map.addSource("basemap", { type: "raster", tiles: [basemap.url], tileSize: 256, attribution });
      map.addLayer({ id: "basemap", type: "raster", source: "basemap" }, beforeId);
      return;
    }
    // The network waits for the basemap: an unreachable style server must not hold it up for long.
    const response = await fetch(basemap.url, { signal: AbortSignal.timeout(STYLE_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`the style answered ${response.status}`);
    addStyle(map, (await response.json()) as maplibregl.StyleSpecification, attribution, beforeId);
  } catch (err) {
    console.warn(`Basemap ${basemap.url} not shown:`, err);
  }
}

function addStyle(
  map: maplibregl.Map,
  style: maplibregl.StyleSpecification,
  attribution: string | undefined,
  beforeId: string | undefined,
): void {
  if (style.glyphs) map.setGlyphs(style.glyphs);
  if (typeof style.sprite === "string") map.setSprite(style.sprite);
  else for (const sprite of style.sprite ?? []) map.addSprite(sprite.id, sprite.url);
  Object.entries(style.sources).forEach(([id, source], i) => {
    // The configured attribution goes on the style's first source (shown while its layers are).
    const withAttribution = i === 0 && attribution ? { ...source, attribution } : source;
    map.addSource(`basemap:${id}`, withAttribution as maplibregl.SourceSpecification);
  });
  for (const layer of style.layers) {
    const prefixed = { ...layer, id: `basemap:${layer.id}` } as maplibregl.LayerSpecification & {
      source?: string;
    };
    if (prefixed.source) prefixed.source = `basemap:${prefixed.source}`;
    map.addLayer(prefixed, beforeId);
  }
}
