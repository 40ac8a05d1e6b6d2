// The README and docs/ hold up in a clone: every link points at a file of the repository (and a heading that
// exists, when it names one), nothing points outside it (no ../shared, no web links but the local server's).
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const PAGES = [
  'README.md',
  'bench/README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const LOCAL = /^https?:\/\/(127\.0\.0\.1|localhost)[:/]/;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));
}

for (const page of PAGES) {
  t.test(page, async (t) => {
    const text = readFileSync(page, 'utf8');
    t.notMatch(text, /\.\.\/shared\//, 'no path into ../shared (a clone does not have it)');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) {
        t.match(target, LOCAL, `${target}: only the local server's addresses`);
        continue;
      }
      const [path, anchor] = target.split('#');
      const file = path ? normalize(join(dirname(page), path)) : page;
      t.ok(existsSync(file), `${target}: ${file} exists`);
      if (anchor && file.endsWith('.md') && existsSync(file))
        t.ok(anchorsOf(file).has(anchor), `${target}: the heading #${anchor} exists`);
    }
  });
}
