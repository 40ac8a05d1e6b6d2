// Small DOM helpers: the page is plain markup, these keep the modules short.

/** The element with this id; a missing one is a bug in the page, so it throws. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

/** A new element with text content and attributes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text = '',
  attributes: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (text) element.textContent = text;
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  return element;
}

/** Appends an item to a log list, keeping only the last `keep` items, and scrolls it into view. */
export function appendLog(list: HTMLElement, item: HTMLElement, keep = 200): void {
  list.append(item);
  while (list.childElementCount > keep) list.firstElementChild!.remove();
  list.scrollTop = list.scrollHeight;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
