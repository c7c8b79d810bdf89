import { Controller, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Public } from '../auth/auth.decorators.js';
import { ProblemException } from '../common/problem/problem.exception.js';
import { ProblemTypes } from '../common/problem/problem-types.js';
import { ApiProblems } from '../openapi/api-responses.js';

class HealthStatus {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

/** Probes for orchestrators: no credentials, nothing but up or down. */
@ApiTags('health')
@Controller('health')
@Public()
// Probes come every few seconds from every orchestrator node; they must never be refused.
@SkipThrottle()
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process serves HTTP (no token)' })
  @ApiOkResponse({ type: HealthStatus })
  @HttpCode(HttpStatus.OK)
  live(): HealthStatus {
    return { status: 'ok' };
  }

  /** The database answers: the instance can take traffic. */
  @Get('ready')
  @ApiOperation({ summary: 'Readiness: the database answers (no token); 503 otherwise' })
  @ApiOkResponse({ type: HealthStatus })
  @ApiProblems(503)
  async ready(): Promise<HealthStatus> {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new ProblemException(ProblemTypes.serviceUnavailable, 'The database is not reachable.', {
        headers: { 'Retry-After': '5' },
      });
    }
    return { status: 'ok' };
  }
}
