/** `npm run bench -- scale counts`: counts throughput and shedding at fixed offered rates (being written). */
export default async function scaleCounts(): Promise<Record<string, unknown>> {
  return { skipped: "not yet measured" };
}
