import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, DiscoveryModule } from '@nestjs/core';
import { AccessTokenInBodyGuard } from './auth/access-token-in-body.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { BearerAuthGuard } from './auth/bearer-auth.guard.js';
import { JsonBodyGuard } from './http/body/json-body.guard.js';
import { DrainingModule } from './http/draining.js';
import { RouteTable } from './http/route-table.js';
import { ProblemDetailsFilter } from './http/problem/problem-details.filter.js';
import { AppValidationPipe } from './http/app-validation.pipe.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { PostsModule } from './posts/posts.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

// Global behaviour lives here as APP_* providers, not on the app object, so the app a test builds
// from AppModule runs exactly the production pipeline.
@Module({
  imports: [
    ConfigModule,
    DrainingModule,
    LoggingModule,
    DiscoveryModule,
    DatabaseModule,
    RateLimitModule,
    AuthModule,
    HealthModule,
    MetricsModule,
    PostsModule,
    WebhooksModule,
  ],
  providers: [
    RouteTable,
    // Guards run in this order. Authentication first, so the throttler can count per principal
    // (API key or OAuth subject) rather than per address; failed authentications, which stop at the
    // first guard, are counted per client IP there (the brute-force cap). Public routes (health)
    // skip both.
    { provide: APP_GUARD, useClass: BearerAuthGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    // Bodies are read only for requests the guards above let through (see JsonBodyGuard); an
    // access_token in one is then refused, as in a query string or a form.
    { provide: APP_GUARD, useClass: JsonBodyGuard },
    { provide: APP_GUARD, useClass: AccessTokenInBodyGuard },
    { provide: APP_FILTER, useClass: ProblemDetailsFilter },
    { provide: APP_PIPE, useClass: AppValidationPipe },
  ],
})
export class AppModule {}
