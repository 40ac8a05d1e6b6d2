// Main thread (configuration): the environment variables of the USSD face.
import { integer, text } from '../env-schema.js';

/** Environment variables of the USSD face. */
export const ussdEnv = {
  USSD_SESSION_TTL_SECONDS: integer(300, 1),
  PIN_LOCK_MINUTES: integer(30, 1),
  /** 64 hex characters are used as the AES-256 key; any other string is stretched with scrypt. */
  PIN_ENCRYPTION_KEY: text(),
};
