/** The analysis routes of the public API, typed for this view (the shared client stays generic). */
import type { FeatureCollection } from "geojson";
import type { StreetflowApi } from "../../api.js";
import type { AnalysisDetail } from "../../../../shared/responses.js";
import type { UsRange } from "./form-logic.js";

export type { AnalysisDetail, NamedSlice } from "../../../../shared/responses.js";

const enc = encodeURIComponent;

export class AnalysesApi {
  constructor(private readonly api: StreetflowApi) {}

  /** The supported and default data periods of a travel mode in a country. */
  dateRanges(country: string, mode: string): Promise<{ supports: UsRange[]; default: UsRange[] }> {
    return this.api
      .request<{ date_ranges: { supports: UsRange[]; default: UsRange[] } }>(
        "GET",
        `/api/v2/date_ranges/${enc(country)}/${enc(mode)}`,
      )
      .then((r) => r.date_ranges);
  }

  /** The preset geographies (boundaries imported with the network) of a country. */
  presetGeographies(
    country: string,
  ): Promise<{ geography_type: string; areas: number; description: string }[]> {
    return this.api
      .request<{
        geography_types: { geography_type: string; areas: number; description: string }[];
      }>("GET", `/api/v2/preset_geographies/${enc(country)}`)
      .then((r) => r.geography_types);
  }

  /** One preset geography's areas as GeoJSON polygons (properties area_id, osm_id, name). */
  presetAreas(country: string, geographyType: string): Promise<FeatureCollection> {
    return this.api.request("GET", `/api/v2/preset_geographies/${enc(country)}/${enc(geographyType)}`);
  }

  create(body: Record<string, unknown>): Promise<{ name: string; uuid: string }> {
    return this.api.request("POST", "/api/v2/analyses", body);
  }

  detail(uuid: string): Promise<AnalysisDetail> {
    return this.api
      .request<{ analysis: AnalysisDetail }>("GET", `/api/v2/analyses/${enc(uuid)}`)
      .then((r) => r.analysis);
  }

  cancel(uuid: string, email: string): Promise<unknown> {
    return this.api.request("POST", `/api/v2/analyses/cancel/${enc(uuid)}`, { insight_login_email: email });
  }

  remove(uuid: string, email: string): Promise<unknown> {
    return this.api.request("DELETE", `/api/v2/analyses/${enc(uuid)}`, { insight_login_email: email });
  }

  /** The organization's tags with how many analyses carry each. */
  tags(): Promise<{ tag_name: string; analysis_num: number }[]> {
    return this.api
      .request<{ tags: { tag_name: string; analysis_num: number }[] }>("GET", "/api/v2/tags")
      .then((r) => r.tags);
  }

  /** Creates a tag of the organization (the vendor's POST /analyses/tags). */
  createTag(email: string, tag: string): Promise<unknown> {
    return this.api.request("POST", "/api/v2/analyses/tags", { insight_login_email: email, tag_name: tag });
  }

  tag(uuid: string, email: string, tag: string): Promise<unknown> {
    return this.api.request("POST", "/api/v2/tags/tag_analyses", {
      insight_login_email: email,
      tags: [tag],
      analyses: [{ uuid }],
    });
  }

  untag(uuid: string, email: string, tag: string): Promise<unknown> {
    return this.api.request("POST", "/api/v2/tags/remove_analyses_tag", {
      insight_login_email: email,
      tags: [tag],
      analyses: [{ uuid }],
    });
  }

  /** One of the analysis' shapefiles as a zip (.shp, .shx, .dbf, .prj, .cpg). */
  shapefile(uuid: string, name: string): Promise<{ blob: Blob; filename: string | null }> {
    return this.api.downloadBlob(`/api/v2/analyses/download/uuid/${enc(uuid)}/${enc(name)}`);
  }

  /** A metric's CSV and the file name the server suggests. */
  metric(uuid: string, metric: string): Promise<{ text: string; filename: string | null }> {
    return this.api.download(`/api/v2/analyses/download/uuid/${enc(uuid)}/${enc(metric)}`);
  }
}
