import type { View } from "../context.js";

/**
 * The sidebar's tabs (WAI-ARIA tabs pattern): one panel shown at a time, arrow keys move between tabs,
 * and the views hear when they come to the front or leave it.
 */
export function setUpTabs(tablist: HTMLElement, views: View[]): void {
  const tabs = [...tablist.querySelectorAll<HTMLButtonElement>('[role="tab"]')];
  const panelOf = (tab: HTMLButtonElement) => document.getElementById(tab.getAttribute("aria-controls")!)!;
  const viewOf = (tab: HTMLButtonElement) => views.find((v) => `tab-${v.id}` === tab.id);
  let current = tabs.find((t) => t.getAttribute("aria-selected") === "true") ?? tabs[0];

  const select = (tab: HTMLButtonElement, focus = false) => {
    if (tab !== current) viewOf(current)?.deactivate?.();
    for (const t of tabs) {
      const selected = t === tab;
      t.setAttribute("aria-selected", String(selected));
      t.tabIndex = selected ? 0 : -1;
      panelOf(t).hidden = !selected;
    }
    if (focus) tab.focus();
    if (tab !== current || focus === false) viewOf(tab)?.activate?.();
    current = tab;
  };

  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (e) => {
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
      if (step !== undefined) select(tabs[(i + step + tabs.length) % tabs.length], true);
      else if (e.key === "Home") select(tabs[0], true);
      else if (e.key === "End") select(tabs[tabs.length - 1], true);
      else return;
      e.preventDefault();
    });
  });
  select(current);
}
