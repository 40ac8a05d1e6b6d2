// Thread: main (front door)
// Which USSD services this gateway serves. At start it reads USSD_SERVICES_DIR (the
// shipped ussd-services/ when unset) and publishes the set (published.ts) for the actor hosts (and, in cluster mode,
// every node); a directory with any problem stops the start (exit 78, each problem with its file and line). It
// reads the directory again on SIGHUP and when a file in it changes: a set with a problem is refused with a log line
// and the running one stays. It knows the current set for /health, /metrics and the service list.
import { watch, type FSWatcher } from 'node:fs';
import { StartupRefusal } from '../../base/errors.js';
import type { Logger } from '../../base/log.js';
import { ussdServicesLoaded } from '../../metrics/catalogue.js';
import type { ServiceDefinition } from './definition.js';
import { formatProblems, readServicesDir } from './load.js';
import { shippedServicesDir } from './catalog.js';
import { VersionClash, type PublishedServices } from './published.js';

/** What a client may see of a service: its id, version, name, codes (and the state each starts at). */
export interface ServiceSummary {
  id: string;
  version: string;
  name: string;
  codes: { code: string; start?: string }[];
}

export interface ServedServices {
  dir: string;
  /** The services new dials get (in cluster mode, the cluster's current set). */
  current(): readonly ServiceSummary[];
  /** Reads the directory again and publishes it when it has no problem; false when refused (logged). */
  reload(reason: string): Promise<boolean>;
  stop(): void;
}

const DEBOUNCE_MS = 200;

export async function startServedServices(
  configured: string | undefined,
  published: PublishedServices,
  log: Logger,
): Promise<ServedServices> {
  const dir = configured ?? shippedServicesDir();
  const first = readServicesDir(dir);
  if (!first.ok)
    throw new StartupRefusal(
      'USSD_SERVICES_DIR',
      `USSD service definitions refused:\n${formatProblems(first.problems)}`,
    );
  try {
    await published.publish(first.sources.map((source) => source.definition));
  } catch (error) {
    if (error instanceof VersionClash) throw new StartupRefusal('USSD_SERVICES_DIR', error.message);
    throw error;
  }
  let current = summaries(first.sources.map((source) => source.definition));
  show(current);
  log.info({ dir, services: current.map(label) }, 'USSD services loaded');

  // Cluster mode: another node may publish; every node then shows (and its hosts serve) that set.
  const watching = await published.watch(() => {
    published.current().then(
      (definitions) => {
        if (!definitions) return;
        current = summaries(definitions);
        show(current);
      },
      (err) => log.warn({ err }, 'USSD services: reading the published set failed'),
    );
  });

  let reloading = Promise.resolve(true);
  const reload = (reason: string): Promise<boolean> => {
    reloading = reloading.then(async () => {
      const read = readServicesDir(dir);
      if (!read.ok) {
        log.error(
          { dir, reason, problems: read.problems },
          `USSD services reload refused, the running versions stay:\n${formatProblems(read.problems)}`,
        );
        return false;
      }
      const definitions = read.sources.map((source) => source.definition);
      try {
        await published.publish(definitions);
      } catch (err) {
        log.error({ dir, reason, err }, `USSD services reload refused: ${(err as Error).message}`);
        return false;
      }
      current = summaries(definitions);
      show(current);
      log.info({ dir, reason, services: current.map(label) }, 'USSD services reloaded');
      return true;
    });
    return reloading;
  };

  const onHangUp = () => void reload('SIGHUP');
  process.on('SIGHUP', onHangUp);
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    // An editor saves in several writes (or a rename): one reload once they settle.
    watcher = watch(dir, () => {
      clearTimeout(timer);
      timer = setTimeout(() => void reload('file change'), DEBOUNCE_MS);
      timer.unref();
    });
    watcher.unref();
  } catch (err) {
    log.warn({ dir, err }, 'USSD services: the directory cannot be watched; reload with SIGHUP');
  }
  return {
    dir,
    current: () => current,
    reload,
    stop() {
      process.off('SIGHUP', onHangUp);
      clearTimeout(timer);
      watcher?.close();
      watching.stop();
    },
  };
}

function summaries(definitions: readonly ServiceDefinition[]): ServiceSummary[] {
  return definitions.map((definition) => ({
    id: definition.id,
    version: definition.version,
    name: definition.name ?? definition.id,
    codes: definition.serviceCodes.map((entry) =>
      typeof entry === 'string' ? { code: entry } : { code: entry.code, start: entry.start },
    ),
  }));
}

const label = (service: ServiceSummary) => `${service.id}@${service.version}`;

/** ussd_services_loaded: one series per service new dials get, at its version. */
function show(services: readonly ServiceSummary[]): void {
  ussdServicesLoaded.collect = (family) => {
    for (const series of family.series()) series.value = 0;
    for (const service of services) family.with(service.id, service.version).value = 1;
  };
}
