import { Inject, Injectable, Logger } from '@nestjs/common';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig, OAuthConfig } from '../../config/environment.js';
import { ProblemException } from '../../common/problem/problem.exception.js';
import { ProblemTypes } from '../../common/problem/problem-types.js';
import { effectiveScopes, type Principal } from '../principal.js';

// RFC 8725 §3.1: an explicit allow-list, asymmetric only. `none` and the HS* family can never verify,
// so a token signed with the issuer's public key used as an HMAC secret is refused.
const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_SECONDS = 60;
const MAX_SUBJECT_LENGTH = 255;

/** Verifies OAuth 2.0 JWT access tokens (RFC 9068) against the issuer's JWKS; null when not configured. */
@Injectable()
export class JwtAccessTokenVerifier {
  private readonly logger = new Logger('OAuth');
  private readonly oauth: OAuthConfig | null;
  private readonly keySet?: ReturnType<typeof createRemoteJWKSet>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.oauth = config.auth.oauth;
    if (this.oauth) {
      // jose caches the key set, refetches it when a token names an unknown `kid` (at most once per
      // cooldown, so garbage kids cannot hammer the issuer) and gives up on a slow issuer.
      this.keySet = createRemoteJWKSet(new URL(this.oauth.jwksUrl), {
        timeoutDuration: 3_000,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
      });
    }
  }

  get enabled(): boolean {
    return this.oauth !== null;
  }

  /** The principal of a valid access token, or null for any token that fails a check. */
  async verify(token: string): Promise<Principal | null> {
    if (!this.oauth || !this.keySet) return null;
    try {
      const { payload, protectedHeader } = await jwtVerify(token, this.keySet, {
        issuer: this.oauth.issuer,
        audience: this.oauth.audience,
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
      });
      if (!this.acceptsType(protectedHeader.typ)) return null;
      return toPrincipal(payload);
    } catch (error) {
      // An issuer whose keys cannot be fetched is an outage, not a bad token: 503, so the client retries
      // instead of throwing its token away. Logged without the token.
      if (isKeySetOutage(error)) {
        this.logger.warn({ message: 'the JWKS could not be fetched', error: (error as Error).message });
        throw new ProblemException(ProblemTypes.serviceUnavailable, 'The authorization server cannot be reached.', {
          headers: { 'Retry-After': '5' },
        });
      }
      return null;
    }
  }

  // RFC 9068 §4: access tokens carry typ "at+jwt" (the "application/" prefix may be left out).
  private acceptsType(typ: string | undefined): boolean {
    const normalized = typ?.toLowerCase().replace(/^application\//, '');
    if (normalized === 'at+jwt') return true;
    return this.oauth!.acceptJwtTyp && (normalized === undefined || normalized === 'jwt');
  }
}

function isKeySetOutage(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return true;
  // Network failures surface as fetch's TypeError; a non-200 answer as a plain JOSEError.
  if (error instanceof TypeError) return true;
  return (
    error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/.test(error.message)
  );
}

function toPrincipal(payload: JWTPayload): Principal | null {
  const subject = payload.sub;
  // The subject becomes an owner id: it must be a visible identifier, not blank or control characters.
  if (typeof subject !== 'string' || subject.length > MAX_SUBJECT_LENGTH || !/^\S(.*\S)?$/u.test(subject)) return null;
  if (/\p{Cc}/u.test(subject)) return null;
  return { id: `oauth:${subject}`, kind: 'oauth', scopes: effectiveScopes(scopesOf(payload)) };
}

// RFC 8693 / RFC 9068: `scope` is a space-separated string; some issuers send `scp` as an array.
function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ');
  if (Array.isArray(payload.scp)) return payload.scp.filter((scope): scope is string => typeof scope === 'string');
  if (typeof payload.scp === 'string') return payload.scp.split(' ');
  return [];
}
