import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  analysisRequest,
  checkForm,
  issueSlot,
  type AnalysisForm,
} from "../../src/web/client/views/analyses/form-logic.js";
import {
  captionOf,
  chartedZone,
  flowsInSlice,
  headingOf,
  parseHomeWorkCsv,
  parseNpCsv,
  parseOdCsv,
  parseValueCsv,
  placeShares,
  speedFeatures,
} from "../../src/web/client/views/analyses/flows.js";

const form = (extra: Partial<AnalysisForm> = {}): AnalysisForm => ({
  name: "",
  email: "p@example.org",
  analysisType: "OD_MF_Analysis",
  travelMode: "All_Vehicles",
  country: "mc",
  originSets: ["o"],
  destinationSets: ["d"],
  middleSets: ["m"],
  dateRanges: [{ start: "2025-01-06", end: "2025-01-12" }],
  dayTypes: ["Average Day|17"],
  dayParts: ["All Day|0023"],
  outputType: "index",
  tripAttributes: false,
  travelerAttributes: false,
  ...extra,
});

describe("the analysis form: OD_MF_Analysis, Segment_Analysis, AADT", () => {
  it("sends the middle filters, the AADT sets and year, and the segment classes of their types only", () => {
    const mf = analysisRequest(form());
    assert.deepEqual([mf.mf_sets, mf.dz_sets], [[{ uuid: "m" }], [{ uuid: "d" }]]);
    const aadt = analysisRequest(form({ analysisType: "AADT", aadtSets: ["a"], aadtYear: "2025" }));
    assert.deepEqual(
      [aadt.az_sets, aadt.aadt_year, "dz_sets" in aadt, "mf_sets" in aadt],
      [[{ uuid: "a" }], 2025, false, false],
    );
    const segments = analysisRequest(form({ analysisType: "Segment_Analysis", segmentTypes: ["Primary"] }));
    assert.deepEqual(segments.segment_types, ["Primary"]);
    assert.equal("segment_types" in analysisRequest(form({ analysisType: "Segment_Analysis" })), false);
  });

  it("asks for the zone sets and the year each type needs, shown by their fields", () => {
    const fields = (f: AnalysisForm) => checkForm(f, null).map((i) => i.field);
    assert.deepEqual(fields(form({ middleSets: [] })), ["mf_sets"]);
    assert.deepEqual(fields(form({ analysisType: "AADT", aadtSets: [], aadtYear: "25" })), [
      "az_sets",
      "aadt_year",
    ]);
    assert.deepEqual(["mf_sets", "az_sets", "aadt_year", "segment_types"].map(issueSlot), [
      "mf_sets",
      "az_sets",
      "aadt_year",
      "segment_types",
    ]);
  });
});

describe("the results map: od_mf flows and per-item values", () => {
  it("sums od_mf rows over their middle filters into one flow per origin and destination", () => {
    const header =
      "device_type,origin_zone_id,origin_zone_name,origin_zone_is_pass_through,origin_zone_direction," +
      "middle_filter_zone_id,middle_filter_zone_name,middle_filter_zone_direction,destination_zone_id," +
      "destination_zone_name,destination_zone_is_pass_through,destination_zone_direction,day_type,day_part," +
      "o_m_d_traffic,origin_zone_traffic,middle_filter_zone_traffic,destination_zone_traffic,avg_trip_duration";
    const row = (m: string, traffic: number) =>
      `All Vehicles,1,West,no,N/A,${m},M${m},N/A,2,East,no,N/A,d,p,${traffic},90,50,80,12`;
    const flows = parseOdCsv([header, row("3", 10), row("4", 5)].join("\n"));
    assert.equal(flows.length, 1);
    assert.deepEqual(
      [flows[0].originName, flows[0].destinationName, flows[0].odTraffic, flows[0].originTraffic],
      ["West", "East", 15, 90],
    );
  });

  it("draws segment rows under the zone's name (line zones) or the road and segment id (polygon pieces)", () => {
    const header =
      "device_type,zone_id,zone_name,segment_id,osm_id,segment_name,road_class,zone_direction,day_type,day_part," +
      "average_daily_segment_traffic,avg_segment_speed_kph,avg_trip_duration,avg_trip_length";
    const rows = parseValueCsv(
      [
        header,
        "All Vehicles,1,Way 1,1,1,Way 1,residential,N/A,d,p,1587,1.7,12,0.28",
        "All Vehicles,5,Block,10001,1,Way 1,residential,N/A,d,p,900,2,12,0.28",
      ].join("\n"),
    );
    assert.deepEqual(
      rows.map((r) => [r.originName, r.destinationName, r.odTraffic]),
      [
        ["Way 1", "Way 1", 1587],
        ["Way 1 (10001)", "Way 1 (10001)", 900],
      ],
    );
    const aadt = parseValueCsv(
      "zone_id,zone_name,zone_is_pass_through,zone_direction,year,days_with_data,aadt,aadt_personal,aadt_commercial,calibrated\n4,Gate,yes,N/A,2025,3,3704,2963,741,no\n",
    );
    assert.deepEqual(
      [aadt[0].originName, aadt[0].odTraffic, aadt[0].dayType, aadt[0].originTraffic],
      ["Gate", 3704, "Year 2025", 2963],
    );
  });
});

describe("Network_Performance results: speeds per segment and period", () => {
  const csv = [
    "device_type,zone_id,zone_name,segment_id,osm_id,segment_name,road_class,zone_direction,day_type,period," +
      "avg_speed_kph,speed_kph_p50,free_flow_speed_kph,avg_travel_time_sec,travel_time_index," +
      "vehicle_hours_of_delay,average_daily_segment_traffic,sample_size",
    "All Vehicles,1,Quai,1,11,Quai,primary,N/A,0: Average Day (M-Su),08:00-09:00,20,20,40,36,2,0.5,120,6",
    "All Vehicles,2,Rue,2,12,Rue,secondary,N/A,0: Average Day (M-Su),08:00-09:00,40,40,N/A,18,N/A,N/A,80,4",
  ].join("\n");

  it("reads the speed, free flow, index and seconds, the period in the day part's place", () => {
    const { flows: rows, measure } = parseNpCsv(csv);
    assert.equal(measure, "speed");
    assert.deepEqual(
      rows.map((r) => [
        r.originName,
        r.dayPart,
        r.odTraffic,
        r.originTraffic,
        r.destinationTraffic,
        r.avgTripDuration,
      ]),
      [
        ["Quai", "08:00-09:00", 20, 40, 2, 36],
        ["Rue", "08:00-09:00", 40, NaN, NaN, 18],
      ],
    );
  });

  const line = (name: string) => ({
    type: "Feature" as const,
    properties: { name },
    geometry: {
      type: "LineString" as const,
      coordinates: [
        [7.42, 43.73],
        [7.43, 43.74],
      ],
    },
  });

  it("draws each segment's line zone, the slowest darkest, and counts rows without a zone", () => {
    const { collection, unplaced } = speedFeatures(parseNpCsv(csv).flows, [line("quai")]);
    assert.equal(unplaced, 1);
    assert.deepEqual(
      collection.features.map((f) => [f.properties?.kind, f.properties?.origin, f.properties?.share]),
      [["segment", "Quai", 0.5]],
    );
  });

  // metric_type=travel_time: the identity columns, the travel time figures and the traffic, no speeds.
  const travelTimeCsv = [
    "device_type,zone_id,zone_name,segment_id,osm_id,segment_name,road_class,zone_direction,day_type,period," +
      "avg_travel_time_sec,travel_time_index,vehicle_hours_of_delay,average_daily_segment_traffic,sample_size",
    "All Vehicles,1,Quai,1,11,Quai,primary,N/A,0: Average Day (M-Su),08:00-09:00,36,2,0.5,120,6",
    "All Vehicles,2,Rue,2,12,Rue,secondary,N/A,0: Average Day (M-Su),08:00-09:00,18,N/A,N/A,80,4",
  ].join("\n");

  it("reads a travel_time metric (no speed columns) by its seconds on the segment and index", () => {
    const { flows, measure } = parseNpCsv(travelTimeCsv);
    assert.equal(measure, "travel_time");
    assert.deepEqual(
      flows.map((r) => [r.originName, r.dayPart, r.odTraffic, r.destinationTraffic, r.avgTripDuration]),
      [
        ["Quai", "08:00-09:00", 36, 2, 36],
        ["Rue", "08:00-09:00", 18, NaN, 18],
      ],
    );
    assert.ok(
      flows.every((r) => Number.isNaN(r.originTraffic)),
      "no free-flow speed",
    );
    assert.throws(
      () => parseNpCsv("device_type,segment_id,period\nAll Vehicles,1,08:00-09:00"),
      /not a network/,
    );
  });

  it("colours travel times the longest darkest, drawn on top", () => {
    const { flows, measure } = parseNpCsv(travelTimeCsv);
    const { collection, unplaced } = speedFeatures(flows, [line("quai"), line("rue")], measure);
    assert.equal(unplaced, 0);
    assert.deepEqual(
      collection.features.map((f) => [f.properties?.origin, f.properties?.share]),
      [
        ["Rue", 0.5],
        ["Quai", 1],
      ],
    );
  });
});

describe("the results table's caption", () => {
  it("says what a row of each type is, and home/work metrics list places", () => {
    assert.equal(captionOf("OD_Analysis"), "Origin-destination flows");
    assert.equal(captionOf("Network_Performance", "np_all"), "Speeds per road segment");
    assert.equal(captionOf("Network_Performance", "np_all", "travel_time"), "Travel times per road segment");
    assert.equal(captionOf("Segment_Analysis", "sa_all"), "Trips per road segment");
    assert.equal(captionOf("AADT", "aadt_all"), "Average daily traffic per zone");
    assert.equal(captionOf("Zone_Activity_Analysis", "za_all"), "Trips per zone");
    assert.equal(captionOf("Zone_Activity_Analysis", "home_grid_all"), "Home and work locations");
    assert.equal(captionOf("Top_Routes_ZA"), "Top routes");
  });

  it("heads the drawer with what the results shown are: the type's, or home and work locations", () => {
    assert.equal(headingOf("OD_Analysis", "Districts"), "Origin-destination flows: Districts");
    assert.equal(headingOf("Top_Routes_OD", "Commute"), "Top routes: Commute");
    assert.equal(headingOf("Network_Performance", "Quai"), "Speeds per road segment: Quai");
    assert.equal(
      headingOf("OD_Preset_Geography", "Communes"),
      "Flows from the zones to the preset areas: Communes",
    );
    assert.equal(headingOf("Zone_Activity_Analysis", "Homes"), "Trips per zone: Homes");
    assert.equal(headingOf("Zone_Activity_Analysis", "Homes", "za_all"), "Trips per zone: Homes");
    assert.equal(
      headingOf("Zone_Activity_Analysis", "Homes", "home_grid_all"),
      "Home and work locations: Homes",
    );
  });
});

describe("home and work location charts", () => {
  // Two zones; each kind's shares over its places add up to 1 per zone.
  const csv = [
    "analysis_group,zone_id,zone_name,zone_is_pass_through,zone_direction,day_type,day_part,traveler_type," +
      "area_id,area_name,trip_share",
    "All,1,Port,no,N/A,0: Average Day (M-Su),0: All Day,Resident,11,Monaco,0.6",
    "All,1,Port,no,N/A,0: Average Day (M-Su),0: All Day,Resident,12,Beausoleil,0.3",
    "All,1,Port,no,N/A,0: Average Day (M-Su),0: All Day,Resident,13,Cap-d'Ail,0.1",
    "All,2,Casino,no,N/A,0: Average Day (M-Su),0: All Day,Resident,11,Monaco,0.2",
    "All,2,Casino,no,N/A,0: Average Day (M-Su),0: All Day,Resident,12,Beausoleil,0.8",
    "All,2,Casino,no,N/A,0: Average Day (M-Su),0: All Day,Visitor,11,Monaco,1",
  ].join("\n");
  const slice = (kind: string) =>
    flowsInSlice(parseHomeWorkCsv(csv).flows, {
      deviceType: kind,
      dayType: "0: Average Day (M-Su)",
      dayPart: "0: All Day",
    });

  it("charts one zone's places, largest share first, adding up to 100 % at most", () => {
    const shares = placeShares(slice("Resident"), "Port");
    assert.deepEqual(shares, [
      { place: "Monaco", share: 60 },
      { place: "Beausoleil", share: 30 },
      { place: "Cap-d'Ail", share: 10 },
    ]);
    assert.equal(
      shares.reduce((sum, p) => sum + p.share, 0),
      100,
    );
  });

  it("charts the chosen row's zone, the only zone unchosen, and none among several unchosen", () => {
    const residents = slice("Resident");
    assert.equal(
      chartedZone(
        residents,
        residents.find((f) => f.originName === "Casino"),
      ),
      "Casino",
    );
    assert.equal(chartedZone(residents, undefined), null);
    assert.equal(chartedZone(slice("Visitor"), undefined), "Casino");
  });
});
