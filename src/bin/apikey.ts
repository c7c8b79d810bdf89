import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { ALL_SCOPES, isScopeName, type ScopeName } from '../auth/principal.js';
import { toApiKeyResource, type ApiKeyResource } from '../auth/api-keys/api-key.resource.js';
import { ApiKeysModule } from '../auth/api-keys/api-keys.module.js';
import { ApiKeysService } from '../auth/api-keys/api-keys.service.js';

const USAGE = `Usage: npm run --silent apikey -- <command> [options]

  create --name NAME --scopes SCOPE[,SCOPE…] [--expires-in 30d] [--json]
         Creates a key and prints its token (shown only this once).
         Scopes: ${ALL_SCOPES.join(', ')}. Durations: 90s, 45m, 12h, 30d.
         posts:read reads published posts; posts:write also writes, and sees its own drafts,
         scheduled posts, revisions and trash; admin sees and changes everyone's.
  list   [--json]       Lists keys (never their tokens).
  revoke ID             Revokes a key; every instance refuses it within 5 seconds.

The database is DATABASE_URL's, as for the service.`;

class UsageError extends Error {}

// Only what key management needs: no HTTP server, no bootstrap key printing.
@Module({ imports: [ConfigModule, DatabaseModule, ApiKeysModule] })
class ApiKeysCliModule {}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      'expires-in': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, ...operands] = positionals;
  if (values.help || command === undefined) return write(USAGE);

  const run = commandFor(command, operands, values);
  const context = await NestFactory.createApplicationContext(ApiKeysCliModule, {
    logger: ['fatal'],
    abortOnError: false,
  });
  try {
    await run(context.get(ApiKeysService), values.json);
  } finally {
    await context.close();
  }
}

type Command = (service: ApiKeysService, json: boolean) => Promise<void>;

function commandFor(
  command: string,
  operands: string[],
  values: { name?: string; scopes?: string; 'expires-in'?: string },
): Command {
  switch (command) {
    case 'create': {
      const name = values.name?.trim();
      if (!name || name.length > 100) throw new UsageError('create needs --name (1 to 100 characters)');
      const scopes = parseScopes(values.scopes);
      const expiresAt =
        values['expires-in'] === undefined ? null : new Date(Date.now() + parseDuration(values['expires-in']));
      return async (service, json) => {
        const { apiKey, token } = await service.create({ name, scopes, expiresAt });
        const created = { ...toApiKeyResource(apiKey), token };
        if (json) return write(JSON.stringify(created));
        write(`Created API key ${apiKey.id} (${apiKey.name}; ${created.scopes.join(', ')}).`);
        write(`Token, shown only now:\n\n  ${token}\n`);
      };
    }
    case 'list':
      return async (service, json) => {
        const keys = (await service.list()).map(toApiKeyResource);
        write(json ? JSON.stringify(keys) : keys.map(describe).join('\n') || 'No API keys.');
      };
    case 'revoke': {
      const id = Number(operands[0]);
      if (operands.length !== 1 || !Number.isSafeInteger(id) || id < 1) throw new UsageError('revoke needs one key id');
      return async (service, json) => {
        await service.revoke(id);
        write(json ? JSON.stringify({ id, revoked: true }) : `Revoked API key ${id}.`);
      };
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function parseScopes(value: string | undefined): ScopeName[] {
  const scopes = (value ?? '')
    .split(',')
    .map((scope) => scope.trim())
    .filter(Boolean);
  if (scopes.length === 0) throw new UsageError(`--scopes needs at least one of ${ALL_SCOPES.join(', ')}`);
  const unknown = scopes.filter((scope) => !isScopeName(scope));
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}; use ${ALL_SCOPES.join(', ')}`);
  return scopes as ScopeName[];
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseDuration(value: string): number {
  const [, amount, unit] = /^([1-9]\d{0,5})([smhd])$/.exec(value) ?? [];
  if (!amount) throw new UsageError('--expires-in takes a duration such as 90s, 45m, 12h or 30d');
  return Number(amount) * DURATION_UNITS[unit];
}

function describe(key: ApiKeyResource): string {
  const state = key.revokedAt ? `revoked ${key.revokedAt}` : key.expiresAt ? `expires ${key.expiresAt}` : 'active';
  return `${key.id}\t${key.tokenHint}…\t${key.name}\t${key.scopes.join(',')}\t${state}\tlast used ${key.lastUsedAt ?? 'never'}`;
}

function write(text: string): void {
  process.stdout.write(`${text}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`apikey: ${(error as Error).message}\n${usage ? `\n${USAGE}\n` : ''}`);
  process.exit(usage ? 2 : 1);
});
