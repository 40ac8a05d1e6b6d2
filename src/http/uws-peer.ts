// A uWS socket's peer address as text, from the binary form: uWS's text form would be decoded per request (the
// getpeername under both is the same). Normalised addresses are remembered by peerKey.
import type uWS from 'uWebSockets.js';
import { addressOfBytes, peerKey } from './client-address.js';

const peers = new Map<number | string, string>();

export function uwsPeer(res: uWS.HttpResponse): string {
  const bytes = new Uint8Array(res.getRemoteAddress());
  const key = peerKey(bytes);
  let peer = peers.get(key);
  if (peer === undefined) {
    if (peers.size > 10_000) peers.clear();
    peer = addressOfBytes(bytes);
    peers.set(key, peer);
  }
  return peer;
}
