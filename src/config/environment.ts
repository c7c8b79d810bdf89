// Long file: one validated declaration per environment variable, and the one place they become AppConfig.
import { plainToInstance } from 'class-transformer';
import {
  getMetadataStorage,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  validateSync,
} from 'class-validator';
import { parseDatabaseUrl, type DatabaseConfig } from './database-url.js';
import { ConfigError } from './config-error.js';

// Every variable the service reads. Values arrive as strings; validation names the variable and what it
// accepts, so a typo fails at start-up instead of on the first request.
class EnvironmentVariables {
  @IsOptional()
  @Matches(/^\d{1,5}$/, { message: 'PORT must be a TCP port number (0-65535)' })
  PORT?: string;

  @IsOptional()
  @IsString()
  @MinLength(1, { message: 'HOST must be a host name or IP address to listen on' })
  HOST?: string;

  @IsOptional()
  @Matches(/^(\/[A-Za-z0-9._~-]+)*$/, {
    message: 'API_PREFIX must be empty or a path such as /api/v1 (no trailing slash)',
  })
  API_PREFIX?: string;

  @IsOptional()
  @IsString()
  DATABASE_URL?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,3}$/, { message: 'DATABASE_POOL_SIZE must be an integer from 1 to 9999' })
  DATABASE_POOL_SIZE?: string;

  @IsOptional()
  @Matches(/^\d+(b|kb|mb)?$/i, { message: 'BODY_LIMIT must be a size such as 1048576, 512kb or 1mb' })
  BODY_LIMIT?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}$/, { message: 'BODY_TIMEOUT must be whole milliseconds from 1 to 999999' })
  BODY_TIMEOUT?: string;

  @IsOptional()
  @MinLength(32, { message: 'CURSOR_SECRET must be at least 32 characters long' })
  @MaxLength(1024, { message: 'CURSOR_SECRET must be at most 1024 characters long' })
  CURSOR_SECRET?: string;

  @IsOptional()
  @Matches(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*[^/?#\s])?$/, {
    message: 'PUBLIC_BASE_URL must be an absolute http(s) URL without a trailing slash, query or fragment',
  })
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9\-._~+/]{32,512}=*$/, {
    message: 'BOOTSTRAP_API_KEY must be 32 to 512 characters of A-Z a-z 0-9 - . _ ~ + / (an RFC 6750 token)',
  })
  BOOTSTRAP_API_KEY?: string;

  @IsOptional()
  @MinLength(1, { message: 'OAUTH_ISSUER must be the exact issuer identifier of the authorization server' })
  OAUTH_ISSUER?: string;

  @IsOptional()
  @MinLength(1, { message: 'OAUTH_AUDIENCE must be the audience value tokens for this API carry' })
  OAUTH_AUDIENCE?: string;

  @IsOptional()
  @Matches(/^(https:\/\/[^\s]+|http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(\/[^\s]*)?)$/, {
    message: 'OAUTH_JWKS_URL must be an https URL (plain http only for localhost)',
  })
  OAUTH_JWKS_URL?: string;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'OAUTH_ACCEPT_JWT_TYP must be true or false' })
  OAUTH_ACCEPT_JWT_TYP?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9\-._~+/]{16,512}=*$/, {
    message: 'METRICS_TOKEN must be 16 to 512 characters of A-Z a-z 0-9 - . _ ~ + /',
  })
  METRICS_TOKEN?: string;

  @IsOptional()
  @Matches(/^(\*|https?:\/\/[^\s,/]+(,https?:\/\/[^\s,/]+)*)$/, {
    message: 'CORS_ORIGINS must be * or a comma-separated list of origins such as https://app.example.com',
  })
  CORS_ORIGINS?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}$/, { message: 'SHUTDOWN_TIMEOUT must be whole milliseconds from 1 to 999999' })
  SHUTDOWN_TIMEOUT?: string;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'REQUIRE_IF_MATCH must be true or false' })
  REQUIRE_IF_MATCH?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}(?:ms|s|m|h|d)$/, {
    message:
      'EVENTS_RETENTION must be a duration such as 30d, 12h, 90m or 500ms (a number from 1 to 999999 and a unit)',
  })
  EVENTS_RETENTION?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,3}$/, { message: 'REVISIONS_PER_POST must be a whole number from 1 to 9999' })
  REVISIONS_PER_POST?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}(?:ms|s|m|h|d)$/, {
    message: 'TRASH_RETENTION must be a duration such as 30d, 12h, 90m or 500ms (a number from 1 to 999999 and a unit)',
  })
  TRASH_RETENTION?: string;

  @IsOptional()
  @Matches(/^(?:[1-9]\d{0,4}ms|(?:[1-9]|1[0-5])s)$/, {
    message: 'EVENTS_HEARTBEAT must be a duration from 1ms to 15s, such as 15s or 500ms',
  })
  EVENTS_HEARTBEAT?: string;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'EVENTS_DELIVERY must be true or false' })
  EVENTS_DELIVERY?: string;

  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'WEBHOOK_SECRET_KEY must be at least 32 characters (e.g. openssl rand -base64 32)' })
  WEBHOOK_SECRET_KEY?: string;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS must be true or false' })
  WEBHOOK_ALLOW_PRIVATE_NETWORKS?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}(?:ms|s|m|h|d)(?:,[1-9]\d{0,5}(?:ms|s|m|h|d)){0,19}$/, {
    message: 'WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated durations, such as 5s,5m,30m,2h',
  })
  WEBHOOK_RETRY_SCHEDULE?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}(?:ms|s)$/, { message: 'WEBHOOK_TIMEOUT must be a duration in ms or s, such as 10s' })
  WEBHOOK_TIMEOUT?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}(?:ms|s|m)$/, { message: 'WEBHOOK_LEASE must be a duration in ms, s or m, such as 60s' })
  WEBHOOK_LEASE?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,8}$/, { message: 'THROTTLE_LIMIT must be a whole number of requests from 1 to 999999999' })
  THROTTLE_LIMIT?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,5}$/, { message: 'THROTTLE_TTL must be a window in whole seconds from 1 to 999999' })
  THROTTLE_TTL?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{0,8}$/, {
    message: 'THROTTLE_AUTH_FAILURE_LIMIT must be a whole number of failed authentications from 1 to 999999999',
  })
  THROTTLE_AUTH_FAILURE_LIMIT?: string;

  @IsOptional()
  @Matches(/^\d{1,2}$/, { message: 'TRUST_PROXY must be the number of proxies in front of the service (0-99)' })
  TRUST_PROXY?: string;

  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, {
    message: 'REDIS_URL must look like redis://host:6379 or rediss://user:pass@host:6380/0',
  })
  REDIS_URL?: string;

  @IsOptional()
  @Matches(/^[A-Za-z0-9:._-]{1,64}$/, { message: 'REDIS_KEY_PREFIX must be 1-64 characters of A-Z a-z 0-9 : . _ -' })
  REDIS_KEY_PREFIX?: string;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'], {
    message: 'LOG_LEVEL must be one of fatal, error, warn, log, debug, verbose',
  })
  LOG_LEVEL?: string;
}

export interface OAuthConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** Also accept `typ: JWT` (or no typ) from issuers that predate RFC 9068's `at+jwt`. */
  acceptJwtTyp: boolean;
}

/** The names of every environment variable the service reads (for docs and config-file checks). */
export function environmentVariableNames(): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(EnvironmentVariables, '', false, false);
  return [...new Set(metadata.map((entry) => entry.propertyName))].sort();
}

export type LogLevelName = 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose';

export interface AppConfig {
  port: number;
  host: string;
  apiPrefix: string;
  database: DatabaseConfig;
  bodyLimitBytes: number;
  /** How long the service waits for a request body, from when it starts reading (ms); then 408. */
  bodyTimeoutMs: number;
  /** null: a random secret per process (cursors then only work on the instance that issued them). */
  cursorSecret: string | null;
  /** null: Location and Link headers are root-relative. */
  publicBaseUrl: string | null;
  logLevel: LogLevelName;
  rateLimit: {
    /** Requests per principal (or client IP) per window. */
    limit: number;
    windowSeconds: number;
    /** Failed authentications per client IP per window before 429. */
    authFailureLimit: number;
    /** null: counters live in this process only. */
    redisUrl: string | null;
    redisKeyPrefix: string;
  };
  /** null: /metrics is public (like the health probes); otherwise it needs this bearer token. */
  metricsToken: string | null;
  /** Origins allowed by CORS; [] turns CORS off, ['*'] allows any origin. */
  corsOrigins: string[];
  /** How long SIGTERM waits for in-flight requests before closing anyway (ms). */
  shutdownTimeoutMs: number;
  /** Writes (PUT, PATCH, DELETE) without If-Match are refused with 428. */
  requireIfMatch: boolean;
  /** Revisions kept per post, the oldest dropped first (contract §10). */
  revisionsPerPost: number;
  /** How long a post stays in the trash before it is erased. */
  trashRetentionMs: number;
  /** Proxies in front of the service whose X-Forwarded-For is believed; 0: none, the peer address counts. */
  trustProxy: number;
  events: {
    /** Events older than this are removed in the background; a cursor before them is 410. */
    retentionMs: number;
    /** An event stream sends a comment at least this often when there is no event (at most 15 s). */
    heartbeatMs: number;
  };
  webhooks: {
    /** false: this instance serves the API but delivers no webhooks (EVENTS_DELIVERY). */
    deliver: boolean;
    /** Encrypts the signing secrets at rest; null: webhooks cannot be created (503). */
    secretKey: string | null;
    allowPrivateNetworks: boolean;
    /** The waits before each retry; after the last one fails, the delivery has failed. */
    retryScheduleMs: number[];
    timeoutMs: number;
    /** How long a claimed delivery is this instance's; a dead instance's claims come back after it. */
    leaseMs: number;
  };
  auth: {
    /** Ensures an admin API key with exactly this value exists. */
    bootstrapApiKey: string | null;
    /** null: OAuth 2.0 JWT access tokens are not accepted. */
    oauth: OAuthConfig | null;
  };
}

export const DEFAULT_DATABASE_URL = 'sqlite:data/posts.sqlite';

export function loadConfig(env: NodeJS.ProcessEnv): AppConfig {
  const variables = plainToInstance(EnvironmentVariables, pickDefined(env));
  const errors = validateSync(variables, { forbidUnknownValues: false });
  if (errors.length > 0) {
    const messages = errors.flatMap((error) => Object.values(error.constraints ?? {}));
    throw new ConfigError(`Invalid configuration: ${messages.join('; ')}`);
  }

  const port = Number(variables.PORT ?? 3000);
  if (port > 65535) throw new ConfigError('Invalid configuration: PORT must be a TCP port number (0-65535)');

  return {
    port,
    host: variables.HOST ?? '0.0.0.0',
    apiPrefix: variables.API_PREFIX ?? '',
    database: parseDatabaseUrl(variables.DATABASE_URL ?? DEFAULT_DATABASE_URL, {
      poolSize: Number(variables.DATABASE_POOL_SIZE ?? 10),
    }),
    bodyLimitBytes: parseByteSize(variables.BODY_LIMIT ?? '1mb'),
    bodyTimeoutMs: Number(variables.BODY_TIMEOUT ?? 30_000),
    cursorSecret: variables.CURSOR_SECRET ?? null,
    publicBaseUrl: variables.PUBLIC_BASE_URL ?? null,
    logLevel: (variables.LOG_LEVEL ?? 'log') as LogLevelName,
    rateLimit: {
      limit: Number(variables.THROTTLE_LIMIT ?? 100),
      windowSeconds: Number(variables.THROTTLE_TTL ?? 60),
      authFailureLimit: Number(variables.THROTTLE_AUTH_FAILURE_LIMIT ?? 20),
      redisUrl: variables.REDIS_URL ?? null,
      redisKeyPrefix: variables.REDIS_KEY_PREFIX ?? 'posts:',
    },
    metricsToken: variables.METRICS_TOKEN ?? null,
    corsOrigins: variables.CORS_ORIGINS === undefined ? [] : variables.CORS_ORIGINS.split(','),
    shutdownTimeoutMs: Number(variables.SHUTDOWN_TIMEOUT ?? 10_000),
    requireIfMatch: variables.REQUIRE_IF_MATCH === 'true',
    revisionsPerPost: Number(variables.REVISIONS_PER_POST ?? 50),
    trashRetentionMs: parseDuration(variables.TRASH_RETENTION ?? '30d'),
    trustProxy: Number(variables.TRUST_PROXY ?? 0),
    events: {
      retentionMs: parseDuration(variables.EVENTS_RETENTION ?? '30d'),
      heartbeatMs: Math.min(parseDuration(variables.EVENTS_HEARTBEAT ?? '15s'), 15_000),
    },
    webhooks: {
      deliver: variables.EVENTS_DELIVERY !== 'false',
      secretKey: variables.WEBHOOK_SECRET_KEY ?? null,
      allowPrivateNetworks: variables.WEBHOOK_ALLOW_PRIVATE_NETWORKS === 'true',
      // Standard Webhooks' schedule: after the first attempt, retries after these waits.
      retryScheduleMs: (variables.WEBHOOK_RETRY_SCHEDULE ?? '5s,5m,30m,2h,5h,10h,14h,20h,24h')
        .split(',')
        .map(parseDuration),
      timeoutMs: parseDuration(variables.WEBHOOK_TIMEOUT ?? '10s'),
      leaseMs: parseDuration(variables.WEBHOOK_LEASE ?? '60s'),
    },
    auth: { bootstrapApiKey: variables.BOOTSTRAP_API_KEY ?? null, oauth: oauthConfig(variables) },
  };
}

function oauthConfig(variables: EnvironmentVariables): OAuthConfig | null {
  const { OAUTH_ISSUER: issuer, OAUTH_AUDIENCE: audience, OAUTH_JWKS_URL: jwksUrl } = variables;
  if (issuer === undefined && audience === undefined && jwksUrl === undefined) {
    if (variables.OAUTH_ACCEPT_JWT_TYP !== undefined) {
      throw new ConfigError(
        'Invalid configuration: OAUTH_ACCEPT_JWT_TYP needs OAUTH_ISSUER, OAUTH_AUDIENCE and OAUTH_JWKS_URL',
      );
    }
    return null;
  }
  if (issuer === undefined || audience === undefined || jwksUrl === undefined) {
    throw new ConfigError(
      'Invalid configuration: OAUTH_ISSUER, OAUTH_AUDIENCE and OAUTH_JWKS_URL must be set together',
    );
  }
  if (!URL.canParse(jwksUrl) || new URL(jwksUrl).hostname === '') {
    throw new ConfigError('Invalid configuration: OAUTH_JWKS_URL must be an https URL (plain http only for localhost)');
  }
  return { issuer, audience, jwksUrl, acceptJwtTyp: variables.OAUTH_ACCEPT_JWT_TYP === 'true' };
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30d`, `12h`, `500ms`: already checked against the variable's pattern. */
function parseDuration(value: string): number {
  const unit = /[a-z]+$/.exec(value)![0];
  return Number(value.slice(0, -unit.length)) * DURATION_UNITS[unit];
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

function parseByteSize(value: string): number {
  const [, digits, unit = 'b'] = /^(\d+)([a-z]*)$/i.exec(value) ?? [];
  const bytes = Number(digits) * (SIZE_UNITS[unit.toLowerCase()] ?? 1);
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new ConfigError('Invalid configuration: BODY_LIMIT must be a size such as 1048576, 512kb or 1mb');
  }
  return bytes;
}

// Names of the variables only; empty strings count as unset, as in most twelve-factor tooling.
function pickDefined(env: NodeJS.ProcessEnv): Record<string, string> {
  const defined: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') defined[name] = value;
  }
  return defined;
}
