// A certificate authority made for one test run with the openssl CLI: its CA, a server certificate for
// localhost / node.test / 127.0.0.1, and a client certificate (mTLS). Files are removed in teardown.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSystemTool } from './system-tools.js';

export interface TestCa {
  dir: string;
  /** Paths of the PEM files. */
  caFile: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  read(path: string): Buffer;
}

export function makeTestCa(t: { teardown(fn: () => unknown): void }): TestCa {
  const openssl = ensureSystemTool('openssl', 'openssl');
  const dir = mkdtempSync(join(tmpdir(), 'sar-ca-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const at = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync(openssl, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(
    'req',
    '-x509',
    ...key,
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=sar test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const issue = (name: string, extensions: string) => {
    writeFileSync(at(`${name}.ext`), extensions);
    run('req', ...key, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`), '-subj', `/CN=${name}`);
    run(
      'x509',
      '-req',
      '-in',
      at(`${name}.csr`),
      '-CA',
      at('ca.pem'),
      '-CAkey',
      at('ca.key'),
      '-CAcreateserial',
      '-out',
      at(`${name}.pem`),
      '-days',
      '2',
      '-extfile',
      at(`${name}.ext`),
    );
  };
  issue('server', 'subjectAltName=DNS:localhost,DNS:node.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  issue('client', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    caFile: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    read: (path) => readFileSync(path),
  };
}
