import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller.js';

// errorLogStyle 'json': a failed check is logged as one structured line, like everything else.
@Module({ imports: [TerminusModule.forRoot({ errorLogStyle: 'json' })], controllers: [HealthController] })
export class HealthModule {}
