import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { APP_OPTIONS, configureApp, createHttpAdapter } from '../../src/app.setup.js';
import { APP_CONFIG } from '../../src/config/config.module.js';
import { generateApiKeyToken } from '../../src/auth/api-keys/api-key-token.js';
import { ApiKeysService } from '../../src/auth/api-keys/api-keys.service.js';
import { Scope, type ScopeName } from '../../src/auth/principal.js';
import { loadConfig } from '../../src/config/environment.js';
import { LOG_DESTINATION } from '../../src/logging/logging.module.js';
import { connectToDeployment, deploymentUrl, NeedsLocalServiceError } from './deployment.js';
import { createTestDatabase } from './test-database.js';

export interface TestApp {
  app: NestExpressApplication;
  baseUrl: string;
  /** DATABASE_URL of this app, for a second instance or a CLI on the same database. */
  databaseUrl: string;
  dataSource: DataSource;
  /** BOOTSTRAP_API_KEY of this app: an admin key. */
  adminToken: string;
  /** A key with posts:read and posts:write, created at start: the ordinary client of most tests. */
  writerToken: string;
  /** A new API key with these scopes, straight through the service (no HTTP round trip). */
  createToken(scopes: ScopeName[], options?: { name?: string; expiresAt?: Date }): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment variables on top of the process's own, as the service would read them. */
  env?: Record<string, string>;
  sqlitePath?: string;
  /** Use this DATABASE_URL instead of a fresh database (the caller owns it). */
  databaseUrl?: string;
  /** Nest log levels; tests are quiet (fatal only) unless they examine the logs. */
  logLevels?: LogLevel[];
  /** Receives the structured (pino) log lines; they are discarded otherwise. */
  logLines?: string[];
}

/**
 * The production application (AppModule + configureApp) on a fresh database with migrations
 * applied, listening on a random loopback port; or, in a run against a deployment (--base-url),
 * that deployment.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  if (deploymentUrl !== undefined) {
    if (Object.keys(options).length > 0) {
      throw new NeedsLocalServiceError(
        `A service started with its own options (${Object.keys(options).join(', ')})`,
        'instance',
      );
    }
    return connectToDeployment(deploymentUrl);
  }
  const database = options.databaseUrl
    ? { url: options.databaseUrl, drop: async () => {} }
    : await createTestDatabase(options);
  const adminToken = generateApiKeyToken();
  const config = loadConfig({
    ...process.env,
    CURSOR_SECRET: 'test-cursor-secret-of-at-least-32-characters',
    BOOTSTRAP_API_KEY: adminToken,
    // Suites other than the rate-limit one send thousands of requests, many failing on purpose.
    THROTTLE_LIMIT: '1000000',
    THROTTLE_AUTH_FAILURE_LIMIT: '1000000',
    ...options.env,
    DATABASE_URL: database.url,
  });
  const logLines = options.logLines;
  const builder = Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(APP_CONFIG)
    .useValue(config)
    .overrideProvider(LOG_DESTINATION)
    .useValue({ write: (line: string) => logLines?.push(line) });
  // Nest's testing logger drops everything below error; a test that reads the logs gets a real one.
  if (options.logLevels) builder.setLogger(new ConsoleLogger({ logLevels: options.logLevels }));
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(createHttpAdapter(), {
    ...APP_OPTIONS,
    logger: options.logLevels ?? ['fatal'],
  });
  configureApp(app, config);
  await app.listen(0, '127.0.0.1');
  const baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1') + config.apiPrefix;
  const apiKeysService = app.get(ApiKeysService);
  const createToken = async (scopes: ScopeName[], options: { name?: string; expiresAt?: Date } = {}) =>
    (await apiKeysService.create({ name: options.name ?? scopes.join('+'), scopes, expiresAt: options.expiresAt }))
      .token;
  return {
    app,
    baseUrl,
    databaseUrl: database.url,
    adminToken,
    writerToken: await createToken([Scope.postsRead, Scope.postsWrite], { name: 'writer' }),
    createToken,
    dataSource: app.get<DataSource>(getDataSourceToken()),
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}
