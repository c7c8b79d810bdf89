import { Global, Module } from '@nestjs/common';
import { LOGGING_CONFIG } from '../config/config.module.js';
import { AppLogger } from './app.logger.js';
import { RequestLogMiddleware } from './request-log.middleware.js';
import { createRootLogger, LOG_DESTINATION, ROOT_LOGGER } from './root-logger.js';

export { LOG_DESTINATION } from './root-logger.js';

/**
 * Structured JSON logs through pino: one line per request (RequestLogMiddleware, mounted by
 * configureApp) and Nest's own messages (AppLogger, which main.ts installs as the application's
 * logger) in the same format.
 */
@Global()
@Module({
  providers: [
    { provide: LOG_DESTINATION, useValue: null },
    { provide: ROOT_LOGGER, inject: [LOGGING_CONFIG, LOG_DESTINATION], useFactory: createRootLogger },
    AppLogger,
    RequestLogMiddleware,
  ],
  exports: [ROOT_LOGGER, AppLogger, RequestLogMiddleware],
})
export class LoggingModule {}
