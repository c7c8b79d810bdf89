import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { checkBaselineParity, checkFloorCreateParity, checkFloorParity, checkServicePipeline } from './checks.js';
import { createBenchDatabase, withConnection, type BenchDatabase } from './databases.js';
import type { BenchOptions, DatabaseTarget, ScenarioName } from './options.js';
import { formatNumber, formatSeconds, print } from './output.js';
import { stopAllChildren } from './processes.js';
import type { DatabaseReport } from './report.js';
import { DEEP_PAGE_TABLE_ROWS, runDeepPageScenario } from './scenarios/deep-page.js';
import { runLatencyScenario } from './scenarios/latency.js';
import type { ScenarioContext } from './scenarios/scenario-context.js';
import type { ScenarioResult } from './scenarios/scenario-result.js';
import { runSoakScenario } from './scenarios/soak.js';
import { runCreateScenario, runGetScenario } from './scenarios/throughput.js';
import { runWebhookScenario } from './scenarios/webhook.js';
import { ownerIdOfApiKey, postIdRange, seedPostsUpTo } from './seed.js';
import { startBaseline, startFloor, startService, type ServiceSecrets } from './servers.js';

// get, create, latency and soak run on a table of this size (it fits every cache: they measure the
// request path, not the disk); deep-page then tops the table up to a million rows.
const SMALL_TABLE_ROWS = 10_000;
const BASELINE_SCENARIOS: ScenarioName[] = ['get', 'latency', 'create'];

export interface DatabaseRun {
  report: DatabaseReport;
  results: ScenarioResult[];
}

/**
 * Every selected scenario on one database: a fresh database, migrated by the service itself, seeded
 * directly, then the service (and the baseline while a scenario needs it) as separate processes.
 */
export async function benchmarkDatabase(
  target: DatabaseTarget,
  options: BenchOptions,
  secrets: ServiceSecrets,
  workDir: string,
  onCleanup: (cleanup: () => Promise<void>) => void,
): Promise<DatabaseRun> {
  const database = await createBenchDatabase(target, workDir);
  onCleanup(() => database.drop());
  const report: DatabaseReport = { database: database.kind, label: database.label, seeding: [] };
  const results: ScenarioResult[] = [];
  const selected = (name: ScenarioName): boolean => options.scenarios.includes(name);
  print();
  print(`== ${database.label} (${database.serverVersion}), a fresh database ==`);
  try {
    const ownerId = await migrate(database, secrets, workDir);
    const seed = async (rows: number): Promise<void> => {
      const seeded = await seedPostsUpTo(database, rows, ownerId);
      report.seeding.push(seeded);
      print(
        `  seeded ${formatNumber(seeded.rowsInserted)} posts in ${formatSeconds(seeded.seconds)} ` +
          `(${formatNumber(seeded.rowsInserted / seeded.seconds)} rows/s); the table has ${formatNumber(seeded.rowsInTable)} rows`,
      );
    };
    const onlyDeepPage = options.scenarios.every((name) => name === 'deep-page');
    await seed(onlyDeepPage ? DEEP_PAGE_TABLE_ROWS : SMALL_TABLE_ROWS);
    const idRange = await withConnection(database, postIdRange);

    const service = await startService(database.url, secrets, workDir, database.kind);
    print(`  service: node dist/src/main.js, pid ${service.pid}, ${service.baseUrl}, log ${service.logPath}`);
    print(`  checked: ${await checkServicePipeline(service, secrets.apiKey, idRange.min)}`);
    const context: ScenarioContext = {
      database,
      service,
      baselineName: database.kind === 'mysql' ? 'B0' : 'B0s',
      settings: {
        apiKey: secrets.apiKey,
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
        rounds: options.rounds,
      },
      idRange,
      cursorSecret: secrets.cursorSecret,
      // --profile: another service process, under node --cpu-prof, its profile in the temporary directory.
      startProfiledService: options.profile
        ? async (scenario) => {
            const fileName = `service-${database.kind}-${scenario}.cpuprofile`;
            const label = `${database.kind}-${scenario}-cpu-prof`;
            const server = await startService(database.url, secrets, workDir, label, { directory: workDir, fileName });
            return { server, profilePath: join(workDir, fileName) };
          }
        : undefined,
    };

    if (BASELINE_SCENARIOS.some(selected)) {
      const baseline = await startBaseline(database.kind, database.url, ownerId, workDir);
      await checkBaselineParity(service, baseline, secrets.apiKey, idRange.min);
      print(
        `  ${context.baselineName}: pid ${baseline.pid}, ${baseline.baseUrl}; checked: same JSON, Content-Type, ETag ` +
          'and Location as the service',
      );
      context.baseline = baseline;
      // --floor: F runs only while get or create measures it (started for each, so latency runs without it).
      const startCheckedFloor = async (scenario: 'get' | 'create'): Promise<void> => {
        if (!options.floor) return;
        const floor = await startFloor(database.kind, database.url, ownerId, workDir, idRange.min);
        context.floor = floor;
        if (scenario === 'get') {
          await checkFloorParity(service, floor, secrets.apiKey, [idRange.min, idRange.max]);
          print(
            `  F: NestJS + platform-express, pid ${floor.pid}, ${floor.baseUrl}; checked: GET /posts/${idRange.min} and ` +
              `/posts/${idRange.max} answer the service's body byte for byte, Content-Type and ETag`,
          );
        } else {
          await checkFloorCreateParity(service, floor, secrets.apiKey);
          print(
            `  F: NestJS + platform-express, pid ${floor.pid}, ${floor.baseUrl}; checked: POST /posts answers 201 with ` +
              'the service\'s fields and Content-Type, Location /posts/<id> and ETag "<id>.1"',
          );
        }
      };
      const stopFloor = async (): Promise<void> => {
        await context.floor?.stop();
        context.floor = undefined;
      };
      if (selected('get')) {
        await startCheckedFloor('get');
        results.push(...(await runGetScenario(context)));
        await stopFloor();
      }
      if (selected('latency')) results.push(await runLatencyScenario(context));
      if (selected('create')) {
        await startCheckedFloor('create');
        results.push(...(await runCreateScenario(context)));
        await stopFloor();
      }
      await baseline.stop();
      context.baseline = undefined;
    }
    if (selected('webhook')) results.push(await runWebhookScenario(context, target, secrets, workDir));
    if (selected('soak')) results.push(await runSoakScenario(context, options.soakSeconds!));
    if (selected('deep-page')) {
      if (!onlyDeepPage) await seed(DEEP_PAGE_TABLE_ROWS);
      results.push(await runDeepPageScenario(context));
    }
    await service.stop();
  } finally {
    await stopAllChildren();
    await database.drop();
  }
  return { report, results };
}

/** Starts the service once on the empty database: it applies its migrations and creates the API key. */
async function migrate(database: BenchDatabase, secrets: ServiceSecrets, workDir: string): Promise<string> {
  const started = performance.now();
  const service = await startService(database.url, secrets, workDir, database.kind);
  await service.stop();
  const ownerId = await ownerIdOfApiKey(database, secrets.apiKey);
  print(
    `  schema: migrated by the service's first start (${formatSeconds((performance.now() - started) / 1000)}); ` +
      `seeded posts belong to ${ownerId}, the bootstrap key`,
  );
  return ownerId;
}
