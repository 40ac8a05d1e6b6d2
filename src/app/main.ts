// Thread: main
// Entry point: configuration -> server; SIGTERM/SIGINT drain within a bounded time.
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, stdoutDestination } from '../base/log.js';
import { startServer } from './server.js';
import { startBanner } from './start-banner.js';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(78); // EX_CONFIG
  }
  throw error;
}

const stdout = stdoutDestination();
const log = createLogger(config.LOG_LEVEL, 'runtime', stdout);
try {
  const server = await startServer(config, log);
  // Info for a person at a terminal. Anywhere else (a journal, a container's log, a pipe) stdout is the JSON log
  // alone, one record a line; quieter levels (npm run cluster runs its nodes at warn) keep it so too.
  if (process.stdout.isTTY && ['info', 'debug', 'trace'].includes(config.LOG_LEVEL)) {
    // Through the log's own stream: pino writes asynchronously, and a console.log would overtake its buffered lines.
    stdout.write(`${startBanner(server).join('\n')}\n`);
  }
  const stop = (signal: string) => {
    // A second signal, or a drain that hangs, must not keep the process alive.
    setTimeout(() => process.exit(1), config.SHUTDOWN_TIMEOUT_MS + 5_000).unref();
    server.shutdown(signal).then(
      () => process.exit(0),
      (err) => {
        log.fatal({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
} catch (error) {
  // A refusal the operator can fix (a variable, the directory it names, NATS that does not sync) exits 78,
  // EX_CONFIG: its message on one line of stderr, as for a bad variable, and in the log without a stack.
  const code = (error as { exitCode?: unknown }).exitCode;
  if (code === 78 && error instanceof Error) {
    console.error(error.message);
    log.fatal({ exitCode: code }, error.message);
  } else {
    log.fatal({ err: error }, error instanceof Error ? error.message : 'start-up failed');
  }
  process.exit(typeof code === 'number' ? code : 1);
}
