// B0: node:http and a mysql2 pool, the service's SQL and JSON, nothing else. Run as a child process.
import { openMysqlStore } from './mysql-store.js';
import { baselineSettings, startBaselineServer } from './post-http.js';

const settings = baselineSettings(process.env);
await startBaselineServer(openMysqlStore(settings), settings);
process.stdout.write(`B0 (node:http + mysql2) listening on ${settings.host}:${settings.port}\n`);
