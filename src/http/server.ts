// Thread: main
// The front door's engine, chosen at start-up (HTTP_ENGINE): uWS (native) when a native build loads here, else
// the portable engine on node:http. Both implement FrontDoor (front-door.ts) and answer alike.
import { StartupRefusal } from '../base/errors.js';
import type { Logger } from '../base/log.js';
import type { FrontDoor, HttpEngine, HttpEngineChoice, HttpServerOptions } from './front-door.js';
import { NodeFrontDoor } from './node-engine.js';
import { UwsFrontDoor } from './uws-engine.js';
import { loadNativeUws } from './uws-native.js';

export type {
  FrontDoor as HttpServer,
  HttpEngine,
  HttpEngineChoice,
  HttpServerOptions,
  StreamLimits,
} from './front-door.js';

/** The front door of `options.engine` (default auto). `uws` without a native build that loads is an error. */
export function createHttpServer(options: HttpServerOptions): FrontDoor {
  const choice = options.engine ?? 'auto';
  if (choice === 'node') return new NodeFrontDoor(options);
  const native = loadNativeUws();
  if (native.module) return new UwsFrontDoor(native.module, native.build, native.version, options);
  if (choice === 'uws')
    throw new StartupRefusal(
      'HTTP_ENGINE',
      `HTTP_ENGINE=uws: no native uWebSockets.js build loads here (${native.reason}); set HTTP_ENGINE=auto or node`,
    );
  return new NodeFrontDoor(options);
}

/** Logs the engine chosen; a warning with the reason and the cost when auto fell back to the portable engine. */
export function logEngine(engine: HttpEngine, choice: HttpEngineChoice, log: Logger): void {
  if (engine.name === 'uws') {
    log.info(
      { httpEngine: engine.name, build: engine.build, uws: engine.version },
      `HTTP engine: uWebSockets.js ${engine.version} (${engine.build} native build)`,
    );
    return;
  }
  if (choice === 'node') {
    log.info({ httpEngine: engine.name, node: engine.version }, 'HTTP engine: node:http (HTTP_ENGINE=node)');
    return;
  }
  const native = loadNativeUws();
  log.warn(
    { httpEngine: engine.name, node: engine.version, reason: native.module ? undefined : native.reason },
    'HTTP engine: node:http, the portable engine: no native uWebSockets.js build loads here. Every face works; ' +
      'the front door costs more CPU per request (see docs/http-engines.md). For the native engine: Node.js 20 on ' +
      'any glibc Linux, or Node.js 20-25 with glibc >= 2.38 (Debian 13, Ubuntu 24.04)',
  );
}
