/**
 * How the ingest hands raw trips to a `BatchMatcher`, shared by the pipeline that sends the groups and the
 * worker pool that takes them ahead.
 */

/** Raw trips per group sent to `matchBatch`: large enough that messaging costs little against matching. */
export const GROUP_TRIPS = 64;

/**
 * Groups in flight: enough to keep the workers matching while the pipeline's thread stores a batch
 * (0.4-1.1 s for 20,000 trips on Monaco, ~15 ms per group matched), once handed to them (`matchAhead`).
 * The 4 there were before covered a tenth of it, then the workers waited; 128 did no better than 48.
 * The pipeline sends a group, then waits while more than these are in flight.
 */
export const GROUPS_IN_FLIGHT = 48;
