import { pino, type DestinationStream, type Level, type Logger } from 'pino';
import type { LoggingConfig } from '../config/config-slices.js';
import type { LogLevelName } from '../config/environment.js';

/** The service's one pino logger: request lines and Nest's messages both go through it. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/** Where log lines go: null for stdout (pretty when it is a terminal). Tests replace it to read the logs. */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');

const PINO_LEVELS: Record<LogLevelName, Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

export function createRootLogger(config: LoggingConfig, destination: DestinationStream | null): Logger {
  const options = { level: PINO_LEVELS[config.logLevel] };
  if (destination !== null) return pino(options, destination);
  if (process.stdout.isTTY) return pino({ ...options, transport: { target: 'pino-pretty' } });
  // stdout that is not a terminal: written asynchronously, so a line costs no blocking write() per
  // request; under load the lines written while one write is in flight go out together. pino flushes
  // what is pending when the process exits (graceful shutdown, a crash); only a SIGKILL or power loss
  // can lose the lines of the last few milliseconds.
  return pino(options, pino.destination({ dest: 1, sync: false }));
}
