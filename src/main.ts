import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppLogger } from './logging/app.logger.js';
import { AppModule } from './app.module.js';
import { assertUsableBootstrapKey } from './auth/bearer-token-kind.js';
import { APP_OPTIONS, configureApp, createHttpAdapter } from './app.setup.js';
import { ConfigError } from './config/config-error.js';
import { loadConfig } from './config/environment.js';
import { installGracefulShutdown } from './http/graceful-shutdown.js';

async function bootstrap(): Promise<void> {
  // Validated before Nest starts, so a bad variable is one clear line and exit code 1.
  const config = loadConfig(process.env);
  assertUsableBootstrapKey(config.auth.bootstrapApiKey);
  const app = await NestFactory.create<NestExpressApplication>(AppModule, createHttpAdapter(), {
    ...APP_OPTIONS,
    // Held until the structured logger below takes over, so start-up messages are JSON as well.
    bufferLogs: true,
  });
  app.useLogger(app.get(AppLogger));
  configureApp(app, config);
  if (config.cursorSecret === null) {
    new Logger('Config').warn(
      'CURSOR_SECRET is not set: pagination cursors are valid only on this instance until it restarts.',
    );
  }
  installGracefulShutdown(app, config.shutdownTimeoutMs);
  await app.listen(config.port, config.host);
  new Logger('Bootstrap').log(`Listening on ${await app.getUrl()}${config.apiPrefix}`);
}

bootstrap().catch((error: unknown) => {
  const message =
    error instanceof ConfigError ? error.message : `Start-up failed: ${(error as Error)?.message ?? error}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
