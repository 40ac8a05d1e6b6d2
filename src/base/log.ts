// Thread: any
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** stdout as pino writes it by default (asynchronously), held so that other text can go through it in order. */
export function stdoutDestination(): DestinationStream {
  return pino.destination({ dest: 1, sync: false });
}

/**
 * One JSON logger for the process; the level comes from LOG_LEVEL. PINs and tokens are never logged. Without a
 * destination, pino's own choice (stdout, or what replaced it).
 */
export function createLogger(level: string, name = 'runtime', destination?: DestinationStream): Logger {
  return pino(
    {
      name,
      level,
      redact: { paths: ['pin', '*.pin', 'req.headers.authorization', 'headers.authorization'], remove: true },
    },
    destination,
  );
}
