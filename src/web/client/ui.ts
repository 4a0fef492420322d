/** Small DOM helpers shared by every view of the page. */

export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export type StatusKind = "info" | "loading" | "error";

/** Writes a status line; `data-kind` drives its spinner (loading) or red text (error). */
export function setStatus(el: HTMLElement, text: string, kind: StatusKind = "info"): void {
  el.textContent = text;
  el.dataset.kind = kind;
}

export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

type Child = Node | string | null | undefined | false;

/**
 * `el("button", {type: "button", className: "x"}, "Save")`: an element with properties set and children
 * appended, so views build their DOM without long runs of createElement/append.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Omit<HTMLElementTagNameMap[K], "style" | "dataset">> & {
    dataset?: Record<string, string>;
    attrs?: Record<string, string>;
  } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  const { dataset, attrs, ...rest } = props;
  Object.assign(node, rest);
  if (dataset) Object.assign(node.dataset, dataset);
  for (const [name, value] of Object.entries(attrs ?? {})) node.setAttribute(name, value);
  for (const child of children) if (child) node.append(child);
  return node;
}

/** A status line announced to assistive technology (errors politely too: they follow a user action). */
export const statusLine = () => el("p", { className: "status", attrs: { role: "status" } });
