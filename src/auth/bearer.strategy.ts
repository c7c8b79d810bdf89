import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
// passport-http-bearer is CommonJS: a default import works under Node's ESM loader and under Vitest.
import passportHttpBearer from 'passport-http-bearer';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { bearerTokenKind } from './bearer-token-kind.js';
import { JwtAccessTokenVerifier } from './oauth/jwt-access-token.verifier.js';
import type { Principal } from './principal.js';

const { Strategy } = passportHttpBearer;

/** Turns the bearer token of the Authorization header into a Principal, or fails it as invalid_token. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly apiKeysService: ApiKeysService,
    private readonly jwtVerifier: JwtAccessTokenVerifier,
  ) {
    super();
  }

  async validate(token: string): Promise<Principal | false> {
    const principal =
      bearerTokenKind(token) === 'jwt'
        ? await this.jwtVerifier.verify(token)
        : await this.apiKeysService.authenticate(token);
    return principal ?? false;
  }
}
