import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MatchRank, matchRank, normalizeName } from "../../src/engine/network/places.js";

describe("place names", () => {
  it("normalizes case, diacritics and punctuation", () => {
    assert.equal(normalizeName("Boulevard d'Italie"), "boulevard d italie");
    assert.equal(normalizeName("  Rue de l’Église  "), "rue de l eglise");
    assert.equal(normalizeName("Straße-Nord 3"), "straße nord 3");
    assert.equal(normalizeName(" - "), "");
  });

  it("ranks exact, name start, word start, all words, inside a word", () => {
    assert.equal(matchRank("rue grimaldi", "rue grimaldi"), MatchRank.Exact);
    assert.equal(matchRank("rue grimaldi", "rue gr"), MatchRank.NameStart);
    assert.equal(matchRank("rue grimaldi", "grim"), MatchRank.WordStart);
    assert.equal(matchRank("avenue albert ii", "alb av"), MatchRank.AllWordStarts);
    assert.equal(matchRank("rue grimaldi", "maldi"), MatchRank.Inside);
    assert.equal(matchRank("rue grimaldi", "albert"), null);
    assert.equal(matchRank("rue grimaldi", ""), null);
  });
});
