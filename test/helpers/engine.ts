// The front-door engine a test file runs on: TEST_HTTP_ENGINE (set by the test/engine-node/ wrappers, which run
// the same files on the portable engine), else auto (uWS when a native build loads). Servers of a test that
// builds its own front door are made with `frontDoor`; startTestServer passes the engine as HTTP_ENGINE.
import { createHttpServer, type HttpServer, type HttpServerOptions } from '../../dist/src/http/server.js';

export type EngineChoice = 'auto' | 'uws' | 'node';

export const TEST_ENGINE: EngineChoice = (process.env.TEST_HTTP_ENGINE as EngineChoice | undefined) ?? 'auto';

export function frontDoor(options: Omit<HttpServerOptions, 'engine'>): HttpServer {
  return createHttpServer({ ...options, engine: TEST_ENGINE });
}

/** Runs `file` (a test file's URL) with the front door on `engine`: the file reads TEST_ENGINE at import. */
export async function runOnEngine(engine: EngineChoice, file: string): Promise<void> {
  process.env.TEST_HTTP_ENGINE = engine;
  await import(file);
}
