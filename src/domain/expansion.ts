/**
 * Sample expansion: how many real trips one observed trip stands for.
 *
 * The one method every count in Streetflow uses (segment counts and zone
 * analyses alike), so numbers from the two interfaces agree:
 *
 *   factor = population / devices observed
 *
 * for the country (or area) and period, when a population is configured for
 * it; otherwise 1, i.e. counts are reported as observed in the sample. An
 * expanded daily volume is then sample trips per day × factor.
 */
export interface ExpansionContext {
  country: string;
  /** Residents the sample represents, when configured. */
  population?: number;
  /** Distinct devices observed in the period. */
  devices?: number;
}

export function expansionFactor(context: ExpansionContext): number {
  const { population, devices } = context;
  if (population === undefined || devices === undefined || devices <= 0 || population <= 0) return 1;
  return population / devices;
}
