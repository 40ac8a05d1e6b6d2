// Thread: main, hand-written for the hot path (cold UCAN verification)
// The bytes a common-shape UCAN's issuer
// signed, as dag-ucan formats them: base64url (no padding) of the DAG-JSON header `{ alg, typ, ucv }`, a dot,
// base64url of the DAG-JSON payload with its keys sorted. Every string in the shape is printable ASCII, so
// JSON.stringify (what cborg's JSON encoder calls for strings) writes it as DAG-JSON does.
import type { CommonUcan } from './ucan.js';

const HEADER = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', ucv: '0.9.1' })).toString('base64url');

/** `audienceJson`: the audience DID as a JSON string; `issuer`: the issuer's did:key. */
export function signedPayload(ucan: CommonUcan, issuer: string, audienceJson: string): Buffer {
  // Keys in code-unit order: att, aud, exp, iss, nbf, nnc, prf; dag-ucan leaves out a zero nbf and an empty nonce.
  const json =
    `{"att":[{"can":"*","with":"${ucan.with}"}],"aud":${audienceJson},"exp":${ucan.expiration},"iss":"${issuer}",` +
    (ucan.notBefore ? `"nbf":${ucan.notBefore},` : '') +
    (ucan.nonce ? `"nnc":${JSON.stringify(ucan.nonce)},` : '') +
    '"prf":[]}';
  return Buffer.from(`${HEADER}.${Buffer.from(json, 'latin1').toString('base64url')}`, 'latin1');
}
