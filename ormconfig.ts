import 'reflect-metadata';
import { loadConfig } from './src/config/environment.js';
import { buildDataSourceOptions } from './src/database/database.options.js';
import { StartupLockedDataSource } from './src/database/startup-lock.js';

// The TypeORM CLI's data source (npm run migration:run / migration:revert / migration:show), built from
// the same DATABASE_URL and the same options as the service; its migrations take the same start-up
// lock, so a release step and instances starting at that moment never apply one twice.
export default new StartupLockedDataSource(buildDataSourceOptions(loadConfig(process.env).database));
