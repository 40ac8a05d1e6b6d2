// The baseline for cold UCAN verification: a bare uWebSockets.js GET route that verifies the Bearer
// invocation with ucanto's own stack (Delegation.extract, @ucanto/validator access, @ucanto/principal's
// pure-JS Ed25519 verifier) for the same capability the oracle checks, then answers fixed JSON. No cache:
// every request is a fresh verification. ORACLE_DID is the audience. Prints LISTENING <port>.
import uWS from 'uWebSockets.js';
import { Delegation } from '@ucanto/core';
import type { DID } from '@ucanto/interface';
import { Verifier } from '@ucanto/principal';
import { access } from '@ucanto/validator';
import { ORACLE_RESOURCE, OracleAccess } from '../../src/oracle/auth/invocation.js';

const oracleDid = process.env.ORACLE_DID as DID;
if (!oracleDid) throw new Error('ORACLE_DID is required');
const authority = Verifier.parse(oracleDid);
const canIssue = (cap: { with: string }, issuer: DID) => cap.with === ORACLE_RESOURCE || cap.with === issuer;

async function verify(bearer: string): Promise<boolean> {
  const extracted = await Delegation.extract(Buffer.from(bearer, 'base64'));
  if (extracted.error || extracted.ok.audience.did() !== oracleDid) return false;
  const result = await access(extracted.ok as never, {
    capability: OracleAccess,
    authority,
    principal: Verifier,
    canIssue,
    validateAuthorization: () => ({ ok: {} }),
  });
  return !result.error;
}

uWS
  .App()
  .get('/*', (res, req) => {
    const bearer = req.getHeader('authorization').replace(/^Bearer /, '');
    let aborted = false;
    res.onAborted(() => (aborted = true));
    verify(bearer).then(
      (ok) =>
        !aborted &&
        res.cork(() =>
          res
            .writeStatus(ok ? '200 OK' : '401 Unauthorized')
            .writeHeader('Content-Type', 'application/json')
            .end(ok ? '{"ok":true}' : '{"ok":false}'),
        ),
      () => !aborted && res.cork(() => res.writeStatus('401 Unauthorized').end()),
    );
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) process.exit(1);
    console.log(`LISTENING ${uWS.us_socket_local_port(socket)}`);
  });
process.on('SIGTERM', () => process.exit(0));
