import { el } from "../../ui.js";
import type { Place } from "./api.js";

const SEARCH_DELAY_MS = 250;

/**
 * A street search box (WAI-ARIA combobox with a listbox popup): typing lists matching places, arrow keys
 * move through them, Enter or a click chooses one, Escape closes the list.
 */
export function setUpPlaceSearch(opts: {
  input: HTMLInputElement;
  list: HTMLUListElement;
  search: (q: string) => Promise<Place[]>;
  choose: (place: Place) => void;
  /** Reports loading, "no match" and errors (the caller's status line). */
  report: (state: "loading" | "done" | "empty" | Error) => void;
}): void {
  const { input, list } = opts;
  let places: Place[] = [];
  let active = -1;
  let timer: number | undefined;
  let latest = 0;

  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", list.id);
  list.setAttribute("role", "listbox");

  const open = (isOpen: boolean) => {
    list.hidden = !isOpen;
    input.setAttribute("aria-expanded", String(isOpen));
    if (!isOpen) setActive(-1);
  };
  const setActive = (i: number) => {
    active = i;
    [...list.children].forEach((option, j) => option.setAttribute("aria-selected", String(j === i)));
    const option = list.children[i] as HTMLElement | undefined;
    if (option) {
      input.setAttribute("aria-activedescendant", option.id);
      option.scrollIntoView({ block: "nearest" });
    } else input.removeAttribute("aria-activedescendant");
  };
  const choose = (i: number) => {
    const place = places[i];
    if (!place) return;
    input.value = place.name;
    open(false);
    opts.choose(place);
  };
  const render = () => {
    list.replaceChildren(
      ...places.map((p, i) => {
        const option = el(
          "li",
          { id: `${list.id}-${i}`, attrs: { role: "option", "aria-selected": "false" } },
          el("span", { className: "place-name" }, p.name),
          el("small", {}, placeDetail(p, places)),
        );
        // mousedown, not click: the input keeps focus so the list does not close first.
        option.addEventListener("mousedown", (e) => {
          e.preventDefault();
          choose(i);
        });
        return option;
      }),
    );
    open(places.length > 0);
    // A new list starts with no option active (the old index may point past its end).
    setActive(-1);
  };
  const run = async (q: string) => {
    const request = ++latest;
    opts.report("loading");
    try {
      const found = await opts.search(q);
      if (request !== latest) return;
      places = found;
      render();
      opts.report(found.length === 0 ? "empty" : "done");
    } catch (err) {
      if (request !== latest) return;
      places = [];
      open(false);
      opts.report(err instanceof Error ? err : new Error(String(err)));
    }
  };

  input.addEventListener("input", () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (q === "") {
      latest++;
      places = [];
      open(false);
      opts.report("done");
      return;
    }
    timer = window.setTimeout(() => void run(q), SEARCH_DELAY_MS);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (places.length === 0) return;
      if (list.hidden) open(true);
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive((active + step + places.length) % places.length);
    } else if (e.key === "Enter") {
      if (list.hidden || places.length === 0) return;
      choose(active >= 0 ? active : 0);
    } else if (e.key === "Escape") {
      if (list.hidden) return;
      open(false);
    } else return;
    e.preventDefault();
  });
  input.addEventListener("blur", () => open(false));
  open(false);
}

/** "primary · 1.2 km", plus the position when the same name appears more than once in the list. */
function placeDetail(place: Place, all: Place[]): string {
  const length = place.length_m >= 1000 ? `${(place.length_m / 1000).toFixed(1)} km` : `${place.length_m} m`;
  const parts = [place.road_class.replace(/_/g, " "), length];
  if (all.filter((p) => p.name === place.name).length > 1)
    parts.push(`${place.point[1].toFixed(4)}, ${place.point[0].toFixed(4)}`);
  return parts.join(" · ");
}
