// A real headless Chromium (Debian's package) driven by playwright-core. Screenshots go to test-artifacts/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { ensureSystemTool } from './system-tools.js';

export const artifactsDir = join(process.cwd(), 'test-artifacts');

/** Launches Chromium; it is closed in the test's teardown. */
export async function launchBrowser(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  ensureSystemTool('chromium', 'chromium');
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    // Without the background-networking flags Chromium keeps dialling Google's hosts, which this machine refuses.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

/** Path for a screenshot kept as a test artifact. */
export function artifactPath(name: string): string {
  mkdirSync(artifactsDir, { recursive: true });
  return join(artifactsDir, name);
}
