// Thread: main (configuration)
// The environment variables of the USSD face.
import * as v from 'valibot';
import { integer, text } from '../base/env-schema.js';
import { pinKeyProblem } from './pin-key.js';

/** A PIN key variable: 64 hex characters, or a passphrase of at least 32 characters (pin-key.ts). */
export const pinKeyVariable = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.rawCheck(({ dataset, addIssue }) => {
      const problem = dataset.typed && dataset.value !== '' ? pinKeyProblem(dataset.value) : undefined;
      if (problem) addIssue({ message: problem });
    }),
  ),
);

/** Environment variables of the USSD face. */
export const ussdEnv = {
  USSD_SESSION_TTL_SECONDS: integer(300, 1),
  /**
   * The longest a USSD step may take before the END text answers it (a telecom gateway gives up after 10-20 s and
   * ends the session on its own). In cluster mode a partition can stall a step: this bounds what a caller sees.
   */
  USSD_STEP_TIMEOUT_MS: integer(15_000, 100, 60_000),
  PIN_LOCK_MINUTES: integer(30, 1),
  /** The pause after a notification's first failed delivery; it doubles per try, to at most a minute. */
  USSD_OUTBOX_BACKOFF_MS: integer(1_000, 10, 60_000),
  /** The directory of USSD service definitions (one .yaml/.yml/.json per service); the shipped ussd-services/ when unset. */
  USSD_SERVICES_DIR: text(),
  /** The END text answering a dial of a code no service claims. */
  USSD_UNKNOWN_CODE_TEXT: text('This service code is not in use.'),
  /** The service code a Beem Africa dial is given (Beem's requests name none): `*150*05#`. */
  USSD_BEEM_SERVICE_CODE: text(),
  /** 64 hex characters are used as the AES-256 key; a passphrase of 32 or more characters is stretched with scrypt. */
  PIN_ENCRYPTION_KEY: pinKeyVariable,
};

/**
 * Rules across variables: a production server must not fall back to a PIN key generated into DATA_DIR (a restore
 * on a new machine would lose every PIN), so the start-up stops with a configuration error (exit 78) instead.
 */
export function ussdConfigProblems(config: { NODE_ENV: string; PIN_ENCRYPTION_KEY?: string }): string[] {
  if (config.NODE_ENV !== 'production' || config.PIN_ENCRYPTION_KEY) return [];
  return [
    'PIN_ENCRYPTION_KEY="": is required when NODE_ENV=production (64 hex characters: openssl rand -hex 32, or a long passphrase)',
  ];
}
