import { Controller, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Public } from '../auth/auth.decorators.js';
import { ProblemException } from '../common/problem/problem.exception.js';
import { ProblemTypes } from '../common/problem/problem-types.js';

interface HealthStatus {
  status: 'ok';
}

/** Probes for orchestrators: no credentials, nothing but up or down. */
@Controller('health')
@Public()
// Probes come every few seconds from every orchestrator node; they must never be refused.
@SkipThrottle()
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The process is up and serving HTTP. */
  @Get('live')
  @HttpCode(HttpStatus.OK)
  live(): HealthStatus {
    return { status: 'ok' };
  }

  /** The database answers: the instance can take traffic. */
  @Get('ready')
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
