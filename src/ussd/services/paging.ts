// Thread: any (and the checker)
// Splits a screen that is over the limit into pages, at line boundaries and
// never inside an option. Every page but the last offers More; every page after the first offers Back (to the
// page before); the state's own navigation lines end every page. A notice (Invalid choice., a refusal) is never
// part of the split: the first page keeps room for the state's longest one, so a screen pages the same with a
// notice above it or without, and More after a notice shows the next option, not one past it.

/** A screen before paging: its text lines (a notice, the body), its options (each kept whole), its tail. */
export interface Layout {
  lines: readonly string[];
  /** One per option, `1. Pay bills`; an option is never split, whatever its length. */
  options: readonly string[];
  /** The state's navigation lines (back, home, exit), on every page. */
  nav: readonly string[];
  /** Whether the state offers Back on its own (its line is in `nav`); pages after the first always do. */
  hasBack: boolean;
}

export interface PageLabels {
  more: string;
  back: string;
}

/**
 * The pages of `layout` for `room` characters each (the limit less `CON `), the first keeping `reserve` characters
 * and a line break free for a notice. One page when it fits.
 */
export function paginate(layout: Layout, room: number, labels: PageLabels, reserve = 0): string[] {
  const above = reserve > 0 ? reserve + 1 : 0;
  const whole = [...layout.lines, ...layout.options, ...layout.nav].join('\n');
  if (whole.length + above <= room) return [whole];
  const laterNav = layout.hasBack ? layout.nav : [labels.back, ...layout.nav];
  const pages: string[][] = [];
  let page: string[] = [];
  let used = 0;
  // Room for the content of a page: less its More line and navigation, each on its own line.
  const roomFor = (first: boolean) =>
    room - [labels.more, ...(first ? layout.nav : laterNav)].join('\n').length - 1 - (first ? above : 0);
  for (const unit of [...split(layout.lines, roomFor(false)), ...layout.options]) {
    const cost = (page.length > 0 ? 1 : 0) + unit.length;
    if (page.length > 0 && used + cost > roomFor(pages.length === 0)) {
      pages.push(page);
      page = [];
      used = 0;
    }
    used += (page.length > 0 ? 1 : 0) + unit.length;
    page.push(unit);
  }
  if (page.length > 0) pages.push(page);
  return pages.map((lines, index) => {
    const last = index === pages.length - 1;
    const tail = [...(last ? [] : [labels.more]), ...(index === 0 ? layout.nav : laterNav)];
    return [...lines, ...tail].join('\n');
  });
}

/** The lines, one longer than a page split at spaces. */
function* split(lines: readonly string[], room: number): Generator<string> {
  for (const unit of lines) {
    if (unit.length <= room) {
      yield unit;
      continue;
    }
    let line = '';
    for (const word of unit.split(' ')) {
      const next = line === '' ? word : `${line} ${word}`;
      if (next.length > room && line !== '') {
        yield line;
        line = word;
      } else line = next;
    }
    if (line !== '') yield line;
  }
}

/**
 * `pages` with `notice` above the first: cut (marked ..) when it is longer than the room the first page kept, so
 * the screen stays within `room` (a notice's values are not known when its room is kept).
 */
export function withNotice(pages: readonly string[], notice: string, room: number): string[] {
  const [first = '', ...rest] = pages;
  if (first === '') return [notice.length <= room ? notice : cut(notice, room), ...rest];
  const free = room - first.length - 1;
  return [`${notice.length <= free ? notice : cut(notice, free)}\n${first}`, ...rest];
}

const cut = (text: string, max: number) => (max < 3 ? text.slice(0, Math.max(0, max)) : `${text.slice(0, max - 2)}..`);
