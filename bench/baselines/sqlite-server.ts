// B0s: node:http and better-sqlite3, the service's SQL and JSON, nothing else. Run as a child process.
import { baselineSettings, startBaselineServer } from './post-http.js';
import { openSqliteStore } from './sqlite-store.js';

const settings = baselineSettings(process.env);
await startBaselineServer(openSqliteStore(settings), settings);
process.stdout.write(`B0s (node:http + better-sqlite3) listening on ${settings.host}:${settings.port}\n`);
