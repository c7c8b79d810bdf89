import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
// passport-http-bearer is CommonJS: a default import works under Node's ESM loader and under Vitest.
import passportHttpBearer from 'passport-http-bearer';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { JwtAccessTokenVerifier } from './oauth/jwt-access-token.verifier.js';
import type { Principal } from './principal.js';

const { Strategy } = passportHttpBearer;

// Three base64url segments: the compact form of a JWS (RFC 7515 §7.1). Anything else is an API key.
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

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
    const principal = JWT_SHAPE.test(token)
      ? await this.jwtVerifier.verify(token)
      : await this.apiKeysService.authenticate(token);
    return principal ?? false;
  }
}
