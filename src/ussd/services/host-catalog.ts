// Thread: actor host
// The services this host serves, as published (published.ts): compiled at the host's start and again
// whenever a new set is published; a session pinned to a version this host does not hold reads and compiles it.
// A published set that does not compile here (it passed the checks where it was published) leaves the old one.
import type { Logger } from '../../base/log.js';
import { builtinService, ServiceCatalog } from './catalog.js';
import { compileService, type CompiledService } from './compile.js';
import type { ServiceDefinition } from './definition.js';
import type { PublishedServices } from './published.js';

export interface HostCatalog {
  catalog: ServiceCatalog;
  readVersion(key: string): Promise<CompiledService | undefined>;
  stop(): void;
}

export async function openHostCatalog(published: PublishedServices, log: Logger): Promise<HostCatalog> {
  const compiled = (definitions: ServiceDefinition[] | undefined) =>
    definitions && definitions.length > 0 ? definitions.map(compileService) : [builtinService()];
  const catalog = new ServiceCatalog(compiled(await published.current()));
  let reading = Promise.resolve();
  const watching = await published.watch(() => {
    // One read at a time, in order: the last one sees the newest set.
    reading = reading.then(async () => {
      try {
        catalog.replace(compiled(await published.current()));
      } catch (err) {
        log.error({ err }, 'published USSD services not taken: the ones before stay');
      }
    });
  });
  return {
    catalog,
    async readVersion(key) {
      const definition = await published.version(key);
      return definition && compileService(definition);
    },
    stop: () => watching.stop(),
  };
}
