/**
 * What the numbers of an OD analysis are, by its output type: volume output is calibrated to counted
 * vehicles (trips per day); index output is the sample expanded to a panel of 10,000 devices, not a count
 * of vehicles (see method.html).
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
