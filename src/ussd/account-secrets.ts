// Thread: any
// What an account keeps under the PIN key, each encrypted for its own context (pin-cipher.ts): the PIN, and the
// account's identity key (its did:key, made at account creation). A key rotation moves them together.
import type { PinCipher } from './actor/pin-cipher.js';
import type { CustomerRecord } from './customers/repository.js';

export type SecretField = 'pin' | 'identityKey';

/** The context an account's identity key is encrypted for (never the PIN's: one cannot stand in for the other). */
export const identityContext = (customerId: string) => `identity|${customerId}`;

/** The secrets `record` holds, each with the context it is encrypted for. */
export function secretsOf(record: CustomerRecord): { field: SecretField; context: string }[] {
  const secrets: { field: SecretField; context: string }[] = [{ field: 'pin', context: record.customerId }];
  if (record.identityKey !== undefined)
    secrets.push({ field: 'identityKey', context: identityContext(record.customerId) });
  return secrets;
}

/**
 * `record` with every secret under `next`: one already under it is kept as it is, another is encrypted again from
 * `current`. The same object when nothing moved; undefined when a secret opens with neither key.
 */
export function secretsUnder(record: CustomerRecord, current: PinCipher, next: PinCipher): CustomerRecord | undefined {
  let moved = record;
  for (const { field, context } of secretsOf(record)) {
    const stored = record[field] as string;
    if (next.opens(stored, context)) continue;
    const again = current.reencrypt(stored, context, next);
    if (again === undefined) return undefined;
    moved = { ...moved, [field]: again };
  }
  return moved;
}

/** `record` without its secrets, to compare two records field for field but for them. */
export function withoutSecrets(record: CustomerRecord): Omit<CustomerRecord, SecretField> {
  const { pin: _pin, identityKey: _key, ...rest } = record;
  return rest;
}
