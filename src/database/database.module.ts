import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/environment.js';
import { buildDataSourceOptions } from './database.options.js';

/** The TypeORM root connection, shared by the service (AppModule) and the CLIs. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        ...buildDataSourceOptions(config.database),
        autoLoadEntities: true,
        // Pending migrations are applied on start (in a transaction each), so a deploy brings its schema.
        migrationsRun: true,
        migrationsTransactionMode: 'each',
        retryAttempts: 5,
        retryDelay: 2_000,
      }),
    }),
  ],
})
export class DatabaseModule {}
