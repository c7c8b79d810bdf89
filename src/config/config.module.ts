import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, CONFIG_SLICE_TOKENS, CONFIG_SLICES } from './config-slices.js';
import { loadConfig } from './environment.js';

export * from './config-slices.js';

// Global so that every module can inject its slice of the typed configuration without re-importing it.
@Global()
@Module({
  providers: [{ provide: APP_CONFIG, useFactory: () => loadConfig(process.env) }, ...CONFIG_SLICES],
  exports: [APP_CONFIG, ...CONFIG_SLICE_TOKENS],
})
export class ConfigModule {}
