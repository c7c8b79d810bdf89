import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { environmentVariableNames, loadConfig } from './environment.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  healthcheck?: { test: unknown };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

// No Docker engine runs where the tests run: the compose file is checked as data instead.
describe('configuration files agree with the configuration schema', () => {
  const names = environmentVariableNames();

  it('knows the variables it validates', () => {
    expect(names).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'REDIS_URL', 'THROTTLE_LIMIT', 'LOG_LEVEL']));
  });

  it('.env.example lists every variable exactly once, and its values are valid defaults', () => {
    const assignments = read('.env.example')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split('=')[0]);
    expect([...assignments].sort()).toEqual(names);

    const values = Object.fromEntries(
      read('.env.example')
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    expect(loadConfig(values)).toEqual(loadConfig({}));
  });

  it('the README configuration table documents every variable', () => {
    const readme = read('README.md');
    for (const name of names) expect(readme, name).toMatch(new RegExp(`^\\| \`${name}\` +\\|`, 'm'));
  });

  it('docker-compose.yml runs the app on MySQL 8.4 and Redis, healthy first, with valid settings', () => {
    const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService>; volumes: object };
    const { app, mysql, redis } = compose.services;

    expect(mysql.image).toBe('mysql:8.4');
    expect(mysql.healthcheck?.test).toBeDefined();
    expect(mysql.volumes?.some((volume) => volume.endsWith(':/var/lib/mysql'))).toBe(true);
    expect(Object.keys(compose.volumes)).toContain('mysql-data');
    expect(redis.image).toMatch(/^redis:/);
    expect(redis.healthcheck?.test).toBeDefined();

    expect(app.build).toBeDefined();
    expect(app.depends_on).toEqual({
      mysql: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    const environment = app.environment ?? {};
    for (const name of Object.keys(environment)) expect(names, `compose sets unknown ${name}`).toContain(name);
    // The values, with compose's ${VAR:-default} fallbacks applied, pass the service's own validation.
    const resolved = Object.fromEntries(
      Object.entries(environment).map(([name, value]) => [name, value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]),
    );
    const config = loadConfig(resolved);
    expect(config.database).toMatchObject({ kind: 'mysql', host: 'mysql', database: 'posts' });
    expect(config.rateLimit.redisUrl).toBe('redis://redis:6379');
  });

  it('the Dockerfile builds in stages, runs as the unprivileged node user and checks /health/live', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/health\/live/m);
  });
});
