import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { differenceCiede2000, parse } from "culori";
import { legendLabel, MAP_BACKGROUND, ROAD_LEGEND, ROAD_STYLE } from "../../src/web/client/road-style.js";

/** CIEDE2000 difference under which two line colours on the map read as the same (about 2.3 is "just noticeable"). */
const MIN_DELTA_E = 10;
const deltaE = differenceCiede2000();
const colour = (hex: string) => {
  const c = parse(hex);
  assert.ok(c, `${hex} is a colour`);
  return c;
};

describe("road-class palette", () => {
  it("gives every pair of legend entries clearly different colours", () => {
    for (const [i, a] of ROAD_LEGEND.entries())
      for (const b of ROAD_LEGEND.slice(i + 1)) {
        const d = deltaE(colour(a.colour), colour(b.colour));
        assert.ok(d >= MIN_DELTA_E, `${legendLabel(a)} vs ${legendLabel(b)}: ΔE ${d.toFixed(1)}`);
      }
  });

  it("draws every road class clearly against the map's background", () => {
    for (const entry of ROAD_LEGEND) {
      const d = deltaE(colour(entry.colour), colour(MAP_BACKGROUND));
      assert.ok(d >= MIN_DELTA_E, `${legendLabel(entry)} vs background: ΔE ${d.toFixed(1)}`);
    }
  });

  it("styles each class once, as its legend entry says, main roads widest", () => {
    const classes = ROAD_LEGEND.flatMap((e) => e.classes);
    assert.equal(new Set(classes).size, classes.length, "no class in two entries");
    for (const entry of ROAD_LEGEND)
      for (const cls of entry.classes)
        assert.deepEqual(ROAD_STYLE[cls], { colour: entry.colour, width: entry.width });
    const widths = ["motorway", "trunk", "primary", "secondary", "tertiary"].map((c) => ROAD_STYLE[c].width);
    assert.deepEqual(
      widths,
      [...widths].sort((x, y) => y - x),
    );
  });
});
