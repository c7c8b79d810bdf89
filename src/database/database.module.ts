import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { ClsModule } from 'nestjs-cls';
import { DataSource } from 'typeorm';
import { DATABASE_CONFIG } from '../config/config.module.js';
import type { DatabaseConfig } from '../config/database-url.js';
import { buildDataSourceOptions } from './database.options.js';
import { keepBackslashEscapes } from './mysql-session.js';
import { retrySqliteBusyWithoutBlocking } from './sqlite-busy-retry.js';
import { gateSqliteTransactions } from './sqlite-transaction-gate.js';
import { StartupLock, StartupLockedDataSource, StartupLockTimeoutError } from './startup-lock.js';

/**
 * The TypeORM root connection, shared by the service (AppModule) and the CLIs. Global, as the data
 * source it provides is, so that what runs at start-up can take the StartupLock it exports.
 *
 * Transactions are carried in the async context (nestjs-cls with its TypeORM transactional plugin):
 * `TransactionHost.withTransaction(fn)` opens one, and every repository that reads `txHost.tx` inside
 * `fn`, in whatever service, writes in it; nothing passes an EntityManager around. No middleware
 * opens a nestjs-cls context: the request log's context (logging/request-context.ts) is the same
 * nestjs-cls one, so the process keeps a single AsyncLocalStorage, and a request that starts no
 * transaction pays one read of it per query.
 *
 * `ClsModule.registerPlugins()`, not `forRoot()`: forRoot registers a global guard and a global
 * interceptor even when it mounts neither (no-ops then), and a global interceptor puts every
 * request of every route through Nest's RxJS pipeline (GET /posts/:id 0.23 → 0.25 CPU ms). What
 * forRoot adds besides (its middleware, proxy providers) the service does not use.
 */
@Global()
@Module({
  imports: [
    ClsModule.registerPlugins([
      new ClsPluginTransactional({ adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: DataSource }) }),
    ]),
    TypeOrmModule.forRootAsync({
      inject: [DATABASE_CONFIG],
      useFactory: (database: DatabaseConfig) => ({
        ...buildDataSourceOptions(database),
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
        const locked = new StartupLockedDataSource(options!);
        if (locked.options.type === 'mysql') keepBackslashEscapes(locked);
        const dataSource = await locked.initialize();
        if (dataSource.options.type === 'better-sqlite3') {
          retrySqliteBusyWithoutBlocking(dataSource);
          gateSqliteTransactions(dataSource);
        }
        return dataSource;
      },
    }),
  ],
  providers: [StartupLock],
  exports: [StartupLock],
})
export class DatabaseModule {}
