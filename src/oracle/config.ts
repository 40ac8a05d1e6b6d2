/** Environment variables of the oracle face (filled in by the oracle runtime). */
export const oracleEnv = {};
