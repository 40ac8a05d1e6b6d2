// Thread: main
// A uWS socket's peer address as text, from the binary form: uWS's text form would be decoded per request (the
// getpeername under both is the same). Normalised addresses are remembered by peerKey.
import type uWS from 'uWebSockets.js';
import { BoundedMap } from '../base/bounded-map.js';
import { addressOfBytes, peerKey } from './client-address.js';

/** Past this many peers the oldest is forgotten, one at a time: a flood of new addresses never empties the memo. */
const PEER_MEMO_LIMIT = 10_000;
const peers = new BoundedMap<number | string, string>(PEER_MEMO_LIMIT);

export function uwsPeer(res: uWS.HttpResponse): string {
  const bytes = new Uint8Array(res.getRemoteAddress());
  const key = peerKey(bytes);
  let peer = peers.get(key);
  if (peer === undefined) {
    peer = addressOfBytes(bytes);
    peers.set(key, peer);
  }
  return peer;
}
