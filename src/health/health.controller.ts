import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator, type HealthCheckResult } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth/auth.decorators.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import { ApiProblems } from '../openapi/api-responses.js';

class HealthStatus {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';

  @ApiProperty({ description: 'Each check and its state, e.g. { "database": { "status": "up" } }', type: Object })
  details: Record<string, unknown>;
}

/** Probes for orchestrators (@nestjs/terminus): no credentials, never throttled. */
@ApiTags('health')
@Controller('health')
@Public()
// Probes come every few seconds from every orchestrator node; they must never be refused.
@SkipThrottle()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process serves HTTP (no token)' })
  @ApiOkResponse({ type: HealthStatus })
  live(): Promise<HealthCheckResult> {
    return this.check([]);
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: the database answers (no token); 503 otherwise' })
  @ApiOkResponse({ type: HealthStatus })
  @ApiProblems(503)
  ready(): Promise<HealthCheckResult> {
    return this.check([() => this.database.pingCheck('database', { timeout: 1_500 })]);
  }

  // Terminus answers a failed check with its own 503 body; it becomes a problem like every other
  // error, naming what is down.
  private async check(indicators: Parameters<HealthCheckService['check']>[0]): Promise<HealthCheckResult> {
    try {
      return await this.health.check(indicators);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const result = error.getResponse() as HealthCheckResult;
      const down = Object.entries(result.error ?? {}).map(
        ([name, state]) => `${name}: ${String(state?.status ?? 'down')}`,
      );
      throw new ProblemException(
        ProblemTypes.serviceUnavailable,
        `Not ready: ${down.join(', ') || 'a check failed'}.`,
        {
          headers: { 'Retry-After': '5' },
        },
      );
    }
  }
}
