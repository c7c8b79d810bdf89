import type { Provider } from '@nestjs/common';
import type { DatabaseConfig } from './database-url.js';
import type { AppConfig } from './environment.js';

// The validated environment is loaded once (APP_CONFIG); a module injects the slice it needs, not
// the whole of it, so what a class depends on shows in its constructor.
export const APP_CONFIG = Symbol('APP_CONFIG');
export const DATABASE_CONFIG = Symbol('DATABASE_CONFIG');
export const HTTP_CONFIG = Symbol('HTTP_CONFIG');
export const AUTH_CONFIG = Symbol('AUTH_CONFIG');
export const RATE_LIMIT_CONFIG = Symbol('RATE_LIMIT_CONFIG');
export const POSTS_CONFIG = Symbol('POSTS_CONFIG');
export const METRICS_CONFIG = Symbol('METRICS_CONFIG');
export const LOGGING_CONFIG = Symbol('LOGGING_CONFIG');
export const EVENTS_CONFIG = Symbol('EVENTS_CONFIG');
export const WEBHOOKS_CONFIG = Symbol('WEBHOOKS_CONFIG');

/** What the HTTP platform reads: paths, URLs and body bounds. */
export type HttpConfig = Pick<AppConfig, 'apiPrefix' | 'publicBaseUrl' | 'bodyLimitBytes' | 'bodyTimeoutMs'>;
export type AuthConfig = AppConfig['auth'];
export type RateLimitConfig = AppConfig['rateLimit'];
export type PostsConfig = Pick<AppConfig, 'cursorSecret' | 'requireIfMatch' | 'revisionsPerPost' | 'trashRetentionMs'>;
export type MetricsConfig = Pick<AppConfig, 'metricsToken'>;
export type LoggingConfig = Pick<AppConfig, 'logLevel'>;
export type EventsConfig = AppConfig['events'];
export type WebhooksConfig = AppConfig['webhooks'];

const slice = <T>(provide: symbol, pick: (config: AppConfig) => T): Provider => ({
  provide,
  inject: [APP_CONFIG],
  useFactory: pick,
});

export const CONFIG_SLICES: Provider[] = [
  slice(DATABASE_CONFIG, (config): DatabaseConfig => config.database),
  slice(HTTP_CONFIG, ({ apiPrefix, publicBaseUrl, bodyLimitBytes, bodyTimeoutMs }): HttpConfig => ({
    apiPrefix,
    publicBaseUrl,
    bodyLimitBytes,
    bodyTimeoutMs,
  })),
  slice(AUTH_CONFIG, (config): AuthConfig => config.auth),
  slice(RATE_LIMIT_CONFIG, (config): RateLimitConfig => config.rateLimit),
  slice(POSTS_CONFIG, ({ cursorSecret, requireIfMatch, revisionsPerPost, trashRetentionMs }): PostsConfig => ({
    cursorSecret,
    requireIfMatch,
    revisionsPerPost,
    trashRetentionMs,
  })),
  slice(METRICS_CONFIG, ({ metricsToken }): MetricsConfig => ({ metricsToken })),
  slice(LOGGING_CONFIG, ({ logLevel }): LoggingConfig => ({ logLevel })),
  slice(EVENTS_CONFIG, (config): EventsConfig => config.events),
  slice(WEBHOOKS_CONFIG, (config): WebhooksConfig => config.webhooks),
];

export const CONFIG_SLICE_TOKENS = [
  DATABASE_CONFIG,
  HTTP_CONFIG,
  AUTH_CONFIG,
  RATE_LIMIT_CONFIG,
  POSTS_CONFIG,
  METRICS_CONFIG,
  LOGGING_CONFIG,
  EVENTS_CONFIG,
  WEBHOOKS_CONFIG,
];
