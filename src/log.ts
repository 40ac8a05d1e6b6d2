import { pino, type Logger } from 'pino';

export type { Logger };

/** One JSON logger for the process; the level comes from LOG_LEVEL. PINs and tokens are never logged. */
export function createLogger(level: string, name = 'runtime'): Logger {
  return pino({
    name,
    level,
    redact: { paths: ['pin', '*.pin', 'req.headers.authorization', 'headers.authorization'], remove: true },
  });
}
