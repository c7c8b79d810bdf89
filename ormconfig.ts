import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/environment.js';
import { buildDataSourceOptions } from './src/database/database.options.js';

// The TypeORM CLI's data source (npm run migration:run / migration:revert / migration:show), built from
// the same DATABASE_URL and the same options as the service.
export default new DataSource(buildDataSourceOptions(loadConfig(process.env).database));
