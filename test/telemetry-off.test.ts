// Tracing off (no OTLP endpoint, the default): a USSD step and a chat turn send nothing anywhere and the
// OpenTelemetry SDK is never loaded into the process. (A file of its own: tracing-on tests load the SDK.)
import t from 'tap';
import { createRequire } from 'node:module';
import { OtlpReceiver } from './helpers/otlp-receiver.js';
import { startTestServer } from './helpers/server.js';
import { postUssd } from './helpers/ussd-gateway.js';

t.test('no endpoint: nothing is sent and no SDK is loaded', async (t) => {
  const receiver = await OtlpReceiver.start();
  t.teardown(() => receiver.close());
  // The SDK's own variables alone do not turn tracing on: only an endpoint does.
  const server = await startTestServer(t, { env: { OTEL_SERVICE_NAME: 'sar-off', OTEL_TRACES_SAMPLER: 'always_on' } });
  const answer = await postUssd(server.url, {
    sessionId: 'off-1',
    serviceCode: '*384*123#',
    phoneNumber: '+254700000001',
    text: '',
  });
  t.equal(answer.status, 200);
  t.match(answer.body, /^CON /);
  await server.shutdown();
  t.equal(receiver.requests, 0, 'nothing reached a collector');
  const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('@opentelemetry/'));
  t.same(
    loaded.filter((path) => /sdk-trace|exporter-trace|otlp-|resources/.test(path)),
    [],
    'no SDK, exporter or resource module in this process',
  );
});
