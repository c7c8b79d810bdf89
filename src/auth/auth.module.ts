import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { ApiKeyBootstrap } from './api-keys/api-key-bootstrap.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { BearerStrategy } from './bearer.strategy.js';
import { JwtAccessTokenVerifier } from './oauth/jwt-access-token.verifier.js';

// The guard itself is registered globally in AppModule (APP_GUARD); this module supplies what it uses.
@Module({
  imports: [PassportModule, ApiKeysModule],
  providers: [BearerStrategy, JwtAccessTokenVerifier, ApiKeyBootstrap],
})
export class AuthModule {}
