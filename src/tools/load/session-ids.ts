// Thread: main
// USSD session IDs as real traffic has them, shared by the load tool and the benchmarks.
import { randomBytes } from 'node:crypto';

/** A random session ID shaped as an aggregator's (Africa's Talking: `ATUid_` and 32 hex digits). */
export const gatewaySessionId = () => `ATUid_${randomBytes(16).toString('hex')}`;
