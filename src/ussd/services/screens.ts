// Thread: any (the checker's --render, tests)
// Every screen of a compiled service as a phone shows it, each state
// in each language on each page, drawn by the step's own renderer (render.ts). Values are shown as `<name>`.
import type { CompiledService } from './compile.js';
import { pagesOf, type Lookup } from './render.js';
import { fill } from './template.js';

export interface Screen {
  state: string;
  language: string;
  /** 1-based; an END screen is one page. */
  page: number;
  pages: number;
  /** What the phone shows: `CON ...` or `END ...`. */
  answer: string;
  /** How the screen is reached when it is not the state's own: `exit` (the exit key's END). */
  via?: 'exit';
}

/** A value shown by its name; the session's own values as a real one would be. */
const sample: Lookup = (name) => (name === 'session.loggedIn' ? 'true' : `<${name}>`);

export function everyScreen(service: CompiledService, lookup: Lookup = sample): Screen[] {
  const screens: Screen[] = [];
  for (const state of service.states.values()) {
    if (state.type === 'action') continue;
    service.languages.forEach((language, l) => {
      if (state.type === 'end') {
        const answer = `END ${fill(state.body[l] ?? '', lookup)}`;
        screens.push({ state: state.name, language, page: 1, pages: 1, answer });
        return;
      }
      const pages = pagesOf(service, state, l, undefined, lookup);
      for (const [p, page] of pages.entries())
        screens.push({ state: state.name, language, page: p + 1, pages: pages.length, answer: `CON ${page}` });
      if (state.exit) {
        const answer = `END ${fill(state.exit[l] ?? '', lookup)}`;
        screens.push({ state: state.name, language, page: 1, pages: 1, answer, via: 'exit' });
      }
    });
  }
  return screens;
}
