// The front-door engine a test file runs on: TEST_HTTP_ENGINE (set by the test/engine-node/ files, which run the
// same test files on the portable engine), else auto (uWS when a native build loads). A test that builds its own
// front door makes it with `frontDoor`; startTestServer passes the engine as HTTP_ENGINE.
import {
  createHttpServer,
  type HttpEngineChoice,
  type HttpServer,
  type HttpServerOptions,
} from '../../dist/src/http/server.js';

export function testEngine(): HttpEngineChoice {
  const engine = process.env.TEST_HTTP_ENGINE;
  return engine === 'uws' || engine === 'node' ? engine : 'auto';
}

export function frontDoor(options: Omit<HttpServerOptions, 'engine'>): HttpServer {
  return createHttpServer({ ...options, engine: testEngine() });
}
