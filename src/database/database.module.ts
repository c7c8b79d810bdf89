import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/environment.js';
import { buildDataSourceOptions } from './database.options.js';
import { retrySqliteBusyWithoutBlocking } from './sqlite-busy-retry.js';
import { StartupLock, StartupLockedDataSource, StartupLockTimeoutError } from './startup-lock.js';

/**
 * The TypeORM root connection, shared by the service (AppModule) and the CLIs. Global, as the data
 * source it provides is, so that what runs at start-up can take the StartupLock it exports.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        ...buildDataSourceOptions(config.database),
        autoLoadEntities: true,
        // Pending migrations are applied on start (in a transaction each), so a deploy brings its
        // schema; under the start-up lock, so instances starting together apply each one once.
        migrationsRun: true,
        migrationsTransactionMode: 'each',
        retryAttempts: 5,
        retryDelay: 2_000,
        // Not after a start-up lock timeout: that wait already took minutes; the process exits 1 and
        // its supervisor starts it again.
        toRetry: (error: unknown) => !(error instanceof StartupLockTimeoutError),
      }),
      dataSourceFactory: async (options) => {
        const dataSource = await new StartupLockedDataSource(options!).initialize();
        if (dataSource.options.type === 'better-sqlite3') retrySqliteBusyWithoutBlocking(dataSource);
        return dataSource;
      },
    }),
  ],
  providers: [StartupLock],
  exports: [StartupLock],
})
export class DatabaseModule {}
