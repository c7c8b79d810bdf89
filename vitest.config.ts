import { createConnection } from 'mysql2/promise';
import swc from 'unplugin-swc';
import { defineConfig, type TestProjectInlineConfiguration, type ViteUserConfig } from 'vitest/config';

// Where the MySQL/MariaDB e2e run creates its throwaway databases (one per test file).
const mysqlUrl = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

async function mysqlUnavailableReason(): Promise<string | null> {
  try {
    const connection = await createConnection({ uri: mysqlUrl, connectTimeout: 2_000 });
    await connection.end();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

// Set by `npm run test:e2e -- --base-url URL` (scripts/test-e2e.js): run the HTTP e2e suite against
// that deployment instead of services started by the tests.
const deploymentUrl = process.env.E2E_BASE_URL;

// Tests that cannot run against a deployment say why with one of these tags.
const tags = [
  {
    name: 'database',
    description: 'Reads or writes the database directly, or needs it to start empty: not run against a deployment.',
  },
  {
    name: 'instance',
    description:
      'Starts or configures a service of its own (environment, logs, signals, injected faults): not run against a deployment.',
  },
];

export default defineConfig(async (): Promise<ViteUserConfig> => {
  // SWC emits the decorator metadata Nest and TypeORM need (esbuild does not).
  const plugins = [swc.vite({ module: { type: 'es6' } })];
  if (deploymentUrl !== undefined) {
    return {
      plugins,
      test: {
        // scripts/test-e2e.js adds --tags-filter '!database && !instance' (a CLI-only option).
        tags,
        projects: [
          {
            extends: true,
            test: {
              name: 'e2e-remote',
              include: ['test/**/*.e2e-spec.ts'],
              // One deployment for every file: files run one after another so counts stay theirs.
              fileParallelism: false,
              testTimeout: 60_000,
              hookTimeout: 60_000,
            },
          },
        ],
      },
    };
  }

  const unavailable = await mysqlUnavailableReason();
  const runMysql = unavailable === null || process.env.CI === 'true';
  if (unavailable !== null) {
    // Under CI the MySQL project still runs, and fails on its first connection: never a silent skip.
    const consequence = runMysql
      ? 'CI=true, so the MySQL e2e tests run and will fail'
      : 'the MySQL e2e tests are NOT run';
    process.stderr.write(
      `\n*** MySQL/MariaDB is not reachable at ${mysqlUrl.replace(/\/\/[^@]*@/, '//')} (${unavailable}): ${consequence}.\n` +
        '*** Start MariaDB or set TEST_MYSQL_URL=mysql://user:pass@host:3306/db to run them.\n\n',
    );
  }

  const e2e = (
    name: string,
    database: string,
    extraInclude: string,
    globalSetup: string[] = [],
  ): TestProjectInlineConfiguration => ({
    extends: true,
    test: {
      name,
      include: ['test/**/*.e2e-spec.ts', extraInclude],
      env: { TEST_DATABASE: database, TEST_MYSQL_URL: mysqlUrl },
      testTimeout: 30_000,
      hookTimeout: 60_000,
      globalSetup,
    },
  });

  return {
    plugins,
    test: {
      tags,
      projects: [
        { extends: true, test: { name: 'unit', include: ['src/**/*.spec.ts'] } },
        e2e('e2e-sqlite', 'sqlite', 'test/**/*.sqlite-spec.ts', ['test/helpers/build-once.ts']),
        ...(runMysql ? [e2e('e2e-mysql', 'mysql', 'test/**/*.mysql-spec.ts', ['test/helpers/build-once.ts'])] : []),
      ],
    },
  };
});
