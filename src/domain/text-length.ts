/**
 * The length of a text as people count characters: Unicode code points, so an emoji counts once and
 * not as the two UTF-16 code units of `String.length`. JSON Schema's maxLength (Ajv) counts the same way,
 * so schema limits and these rules agree.
 */
export function charCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The first `max` code points of a text, never splitting a character in two. */
export function truncateChars(text: string, max: number): string {
  return charCount(text) <= max ? text : [...text].slice(0, max).join("");
}
