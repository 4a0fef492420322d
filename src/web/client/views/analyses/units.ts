/**
 * What the numbers of an OD analysis are, by its output type: volume output is calibrated to counted
 * vehicles (trips per day); index output is the sample expanded to a panel of 10,000 devices, not a count
 * of vehicles (see method.html); trip_counts sums the expanded trips over the analysed days. The flows of
 * aadt and zone_counts output are index values; their extra metric has its own unit (resultUnit).
 */
export interface FlowUnits {
  /** The flow table's column of the pair's value. */
  column: string;
  /** After a number in running text. */
  inline: string;
  /** The chart's axis and series. */
  axis: string;
  /** One sentence for the legend. */
  explanation: string;
}

export const METHOD_PAGE = "method.html#expansion";

export function flowUnits(outputType: string | undefined): FlowUnits {
  if (outputType === "trip_counts")
    return {
      column: "Trips (period total)",
      inline: "trips in the period",
      axis: "Trips summed over the analysed days",
      explanation: "Trip counts: expanded trips summed over the analysed days, not a daily average.",
    };
  if (outputType === "volume")
    return {
      column: "Trips/day",
      inline: "trips/day",
      axis: "Trips per day",
      explanation: "Volume: vehicle trips per day, calibrated to the zones' counts.",
    };
  return {
    column: "Index (trips/day)",
    inline: "trips/day (index)",
    axis: "Index: trips per day of a 10,000-device panel",
    explanation: "Index: trips per day expanded to a panel of 10,000 devices, not counted vehicles.",
  };
}

/** The unit of an analysis' headline result, shown beside its output type in the analysis view. */
export function resultUnit(outputType: string): string {
  switch (outputType) {
    case "volume":
      return "vehicle trips per day (calibrated)";
    case "trip_counts":
      return "trips over the analysed days";
    case "aadt":
      return "AADT: annual average daily traffic (aadt CSV); flows as index";
    case "zone_counts":
      return "index; per-zone totals in the zone_counts CSV";
    default:
      return "index: trips per day of a 10,000-device panel";
  }
}
