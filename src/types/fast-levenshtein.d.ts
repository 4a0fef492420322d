/** fast-levenshtein ships no types: the edit distance of two strings. */
declare module "fast-levenshtein" {
  const levenshtein: { get(a: string, b: string, options?: { useCollator?: boolean }): number };
  export default levenshtein;
}
