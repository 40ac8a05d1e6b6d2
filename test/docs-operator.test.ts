// What an operator follows from a fresh clone holds: the README names the Node.js line for production and the image
// builds on it; no example writes a private key into the checkout, and git ignores keys; every npm script that runs
// the compiled tools builds dist/ first (a fresh clone got a raw MODULE_NOT_FOUND from npm run load).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';

const readme = readFileSync('README.md', 'utf8');

t.test('the README says which Node.js line runs in production, why, and the image uses it', async (t) => {
  const line = /\*\*In production: Node\.js (\d+)\*\*[^*]*\*\*on a system with glibc ([\d.]+) or newer\*\*/.exec(
    readme,
  );
  t.ok(line, 'a production line and its platform need');
  t.match(readme, /Node\.js\s+20[^.]*reached its end of life/, 'and why not Node.js 20');
  t.match(readme, /portable\s+engine/, 'and what an older glibc costs');
  const images = [...readFileSync('deploy/cluster/Dockerfile', 'utf8').matchAll(/^FROM node:(\d+)-(\w+)/gm)];
  t.ok(images.length > 0);
  for (const [, major, release] of images) {
    t.equal(major, line?.[1], `the image's Node.js (${major}) is the README's`);
    t.equal(release, 'trixie', 'on Debian 13 (glibc 2.41)');
  }
});

t.test('no example writes a private key into the checkout; git ignores key files', async (t) => {
  const pages = ['README.md', ...readdirSync('docs').map((name) => `docs/${name}`)];
  const keyFiles = pages.flatMap((page) =>
    [...readFileSync(page, 'utf8').matchAll(/--key-file\s+("?)([^\s"]+)\1/g)].map((m) => ({ page, path: m[2] })),
  );
  t.ok(keyFiles.length > 0, 'the chat examples name a key file');
  for (const { page, path } of keyFiles)
    t.match(path, /^(~\/|\$HOME\/|\/)/, `${page}: --key-file ${path} is outside the checkout`);
  for (const name of ['user.key', 'docs/user.key'])
    t.equal(execFileSync('git', ['check-ignore', name], { encoding: 'utf8' }).trim(), name, `git ignores ${name}`);
});

t.test('every npm script that runs dist/ builds it when needed', async (t) => {
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  for (const [name, command] of Object.entries(scripts)) {
    if (!/\bnode dist\//.test(command)) continue;
    const builds =
      /^(node scripts\/build-if-needed\.mjs|npm run build) && /.test(command) ||
      scripts[`pre${name}`]?.includes('build-if-needed');
    t.ok(builds, `npm run ${name}: ${command}`);
  }
});
