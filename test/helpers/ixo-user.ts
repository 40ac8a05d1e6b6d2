// A did:ixo user of the embedded local query node's sample data: fixtures/gateway-local-node.json holds its
// IidDocument, whose Ed25519 verification methods carry the public halves of these two test-only keys
// (key-1 as a bare base58btc key, key-2 as a multikey).
import type { DID, Signer } from '@ucanto/interface';
import { generateKey, parseKey } from '../../dist/src/oracle/auth/mint.js';

export const IXO_USER_DID = 'did:ixo:ixo1f9l8tdj0fatz6dvjpdrqsreesdyrq2g7xaqmgm';

const KEY_1 = 'MgCZb9EiiqeIOxEPI+IKdfLzw+ZL052WV1DFd930T20vyUe0BoRXiReYJyySATTD9g2xgulymdbKDgPDxVTLDiyMFxes=';
const KEY_2 = 'MgCZGD0f67wUN8ZYrlyQLBZoUOOikdJaXlV//Get2PC6SzO0BBE8RlNy/OeLf8noV3lSyj6jytr3XmSDSOPigbaO63Xc=';

/** The user's signer with one of its keys (1 or 2), signing as the did:ixo. */
export function ixoUserSigner(key: 1 | 2): Signer {
  return parseKey(key === 1 ? KEY_1 : KEY_2).withDID(IXO_USER_DID as DID);
}

/** A did:key the chain does not list for the user, signing as the did:ixo all the same. */
export async function impostorSigner(): Promise<Signer> {
  return (await generateKey()).withDID(IXO_USER_DID as DID);
}
