import { Global, Module } from '@nestjs/common';
import { loadConfig } from './environment.js';

export const APP_CONFIG = Symbol('APP_CONFIG');

// Global so that every feature module can inject the typed configuration without re-importing it.
@Global()
@Module({
  providers: [{ provide: APP_CONFIG, useFactory: () => loadConfig(process.env) }],
  exports: [APP_CONFIG],
})
export class ConfigModule {}
