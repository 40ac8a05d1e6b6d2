// Thread: any
// The services one thread serves. New dials get the current version of the
// service their code names; a session keeps the version it started on (looked up by `id@version`), so versions
// replaced by a reload stay known here for the sessions still running on them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CompiledService, CompiledState } from './compile.js';
import { checkServiceText } from './check.js';

export interface Dialled {
  service: CompiledService;
  start: CompiledState;
}

export class ServiceCatalog {
  #current: readonly CompiledService[] = [];
  #byCode = new Map<string, Dialled>();
  readonly #byKey = new Map<string, CompiledService>();

  constructor(services: readonly CompiledService[]) {
    this.replace(services);
  }

  /** Serves `services` to new dials from now on; the versions served before stay known to their sessions. */
  replace(services: readonly CompiledService[]): void {
    const byCode = new Map<string, Dialled>();
    for (const service of services) {
      this.#byKey.set(service.key, service);
      for (const [code, start] of service.codes) byCode.set(code, { service, start });
    }
    this.#current = services;
    this.#byCode = byCode;
  }

  /** The services new dials get. */
  current(): readonly CompiledService[] {
    return this.#current;
  }

  /** A version known to this thread, by `id@version`. */
  version(key: string): CompiledService | undefined {
    return this.#byKey.get(key);
  }

  /** Remembers a version read for a session pinned to it (one no longer current). */
  remember(service: CompiledService): void {
    this.#byKey.set(service.key, service);
  }

  /**
   * The service and start state a code dials: the code itself, or else the longest claimed code it extends
   * (`*384*7#` dials the service of `*384#`, at its start); undefined when no service claims it.
   */
  dial(code: string): Dialled | undefined {
    const exact = this.#byCode.get(code);
    if (exact) return exact;
    for (let end = code.lastIndexOf('*'); end > 0; end = code.lastIndexOf('*', end - 1)) {
      const base = this.#byCode.get(`${code.slice(0, end)}#`);
      if (base) return { service: base.service, start: base.service.start };
    }
    return undefined;
  }
}

/** The shipped services directory (ussd-services/ at the package root), found from this module's place. */
export function shippedServicesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 6; up++, dir = dirname(dir)) {
    if (existsSync(join(dir, 'ussd-services', 'builtin.yaml'))) return join(dir, 'ussd-services');
  }
  throw new Error('ussd-services/builtin.yaml not found beside the package');
}

let builtin: CompiledService | undefined;

/** The built-in service, read and compiled once per thread. */
export function builtinService(): CompiledService {
  if (builtin) return builtin;
  const file = join(shippedServicesDir(), 'builtin.yaml');
  const checked = checkServiceText(readFileSync(file, 'utf8'), file);
  if (checked.problems.length > 0 || !checked.compiled)
    throw new Error(`${file}: ${checked.problems.map((p) => `line ${p.line}: ${p.message}`).join('; ')}`);
  builtin = checked.compiled;
  return builtin;
}

let builtinOnly: ServiceCatalog | undefined;

/** A catalog of the built-in service alone (the menu's default, and tests). */
export function builtinCatalog(): ServiceCatalog {
  builtinOnly ??= new ServiceCatalog([builtinService()]);
  return builtinOnly;
}
