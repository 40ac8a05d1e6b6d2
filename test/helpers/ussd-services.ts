// USSD services as data in tests: a services directory holding the built-in service and the shop fixture
// (test/fixtures/ussd-services/shop.yaml), versions of the shop written into it, and a log that tests await.
import { EventEmitter } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';

/** The head of a one-language (English) service definition, everything above its `states:`, for tests' own services. */
export const englishServiceHead = (id: string, code: string, start: string): string => `id: ${id}
version: 1.0.0
serviceCodes: ['${code}']
languages: { en: English }
defaultLanguage: en
labels: { back: Back, home: Home, exit: Exit, more: More }
messages: { invalidChoice: Invalid choice., loginRequired: Please log in first. }
start: ${start}
`;

export const BUILTIN_FILE = 'ussd-services/builtin.yaml';
export const SHOP_FILE = 'test/fixtures/ussd-services/shop.yaml';
export const SHOP_CODE = '*500#';
/** The shop's extended code: it starts at the product list. */
export const SHOP_PRODUCTS_CODE = '*500*2#';

/** The shop's text as shipped (version 1.0.0). */
export const shopText = (): string => readFileSync(SHOP_FILE, 'utf8');

/**
 * The shop at `version`, its welcome line and its quantity limit changed so that screens tell versions apart:
 * `Welcome to Mama Mboga's shop (v<version>)` and `How many? (1-<max>)`.
 */
export function shopVersion(version: string, max = 20): string {
  return shopText()
    .replace('version: 1.0.0', `version: ${version}`)
    .replace('en: "Welcome to Mama Mboga\'s shop"', `en: "Welcome to Mama Mboga's shop (v${version})"`)
    .replace('max: 20', `max: ${max}`)
    .replaceAll('(1-20)', `(1-${max})`);
}

/** A fresh directory with the built-in service and the shop (or `shop`, its text); removed in teardown. */
export function servicesDir(t: { teardown(fn: () => unknown): void }, shop = shopText()): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-services-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  copyFileSync(BUILTIN_FILE, join(dir, 'builtin.yaml'));
  writeFileSync(join(dir, 'shop.yaml'), shop);
  return dir;
}

export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger whose records a test can await: `next(match)` resolves with the first matching record from now on. */
export class AwaitedLog {
  readonly entries: LogEntry[] = [];
  readonly #events = new EventEmitter();
  readonly logger: Logger = pino({ level: 'info' }, { write: (line: string) => this.#add(JSON.parse(line)) });

  #add(entry: LogEntry): void {
    this.entries.push(entry);
    this.#events.emit('entry', entry);
  }

  /** The first record from now on that `match` accepts; rejects after `timeoutMs`. */
  next(match: (entry: LogEntry) => boolean, timeoutMs = 10_000): Promise<LogEntry> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#events.off('entry', listener);
        reject(new Error(`no log record matched within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (entry: LogEntry) => {
        if (!match(entry)) return;
        clearTimeout(timer);
        this.#events.off('entry', listener);
        resolve(entry);
      };
      this.#events.on('entry', listener);
    });
  }
}

/** A record of a reload taken (`reason`: SIGHUP or file change). */
export const reloaded = (reason: string) => (entry: LogEntry) =>
  entry.msg === 'USSD services reloaded' && entry.reason === reason;
/** A record of a reload refused. */
export const refused = (entry: LogEntry) => entry.msg.startsWith('USSD services reload refused');
