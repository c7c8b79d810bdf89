import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwksCache,
  jwtVerify,
  type CryptoKey,
  type ExportedJWKSCache,
  type FlattenedJWSInput,
  type JWKSCacheInput,
  type JWSHeaderParameters,
  type JWTPayload,
} from 'jose';
import { AUTH_CONFIG, type AuthConfig } from '../../config/config.module.js';
import type { OAuthConfig } from '../../config/environment.js';
import { ProblemException } from '../../http/problem/problem.exception.js';
import { ProblemTypes } from '../../http/problem/problem-types.js';
import { effectiveScopes, type Principal } from '../principal.js';
import { JwksCircuitBreaker } from './jwks-circuit-breaker.js';

// RFC 8725 §3.1: an explicit allow-list, asymmetric only. `none` and the HS* family can never verify,
// so a token signed with the issuer's public key used as an HMAC secret is refused.
const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_SECONDS = 60;
const MAX_SUBJECT_LENGTH = 255;

const JWKS_TIMEOUT_MS = 3_000;
// After a failed fetch, a request that needs the issuer gets a 503 at once instead of waiting out the
// timeout; the window doubles while probes keep failing, so a long outage costs the issuer one
// request per 30 s, and a short one delays recovery by two seconds.
const JWKS_FIRST_OPEN_MS = 2_000;
const JWKS_MAX_OPEN_MS = 30_000;
// While the issuer cannot be reached, a key set past its 10-minute lifetime still verifies tokens: an
// issuer outage should not become ours, and the issuer cannot rotate keys while down either. The cost
// is that a key the issuer withdrew keeps working until we can fetch again, so only for a day.
const STALE_KEY_SET_LIMIT_MS = 24 * 60 * 60_000;

type KeyResolver = (protectedHeader: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

/** Thrown by the key resolver instead of fetching while the circuit is open. */
class KeySetFetchRefused extends Error {}

/** Verifies OAuth 2.0 JWT access tokens (RFC 9068) against the issuer's JWKS; null when not configured. */
@Injectable()
export class JwtAccessTokenVerifier {
  private readonly logger = new Logger('OAuth');
  private readonly oauth: OAuthConfig | null;
  private readonly keySet?: ReturnType<typeof createRemoteJWKSet>;
  // jose writes the set and the time of every successful fetch here: how we see fetches succeed, and
  // the keys we fall back on while the issuer is down.
  private readonly fetchedKeySet: Partial<ExportedJWKSCache> = {};
  private lastFetchSeen?: number;
  private lastFetchedKeys?: { fetchedAt: number; resolve: KeyResolver };
  private readonly breaker = new JwksCircuitBreaker({
    firstOpenMs: JWKS_FIRST_OPEN_MS,
    maxOpenMs: JWKS_MAX_OPEN_MS,
    // The fetch timeout, and a margin for the answer to be read: no second probe while one can still land.
    probeTimeoutMs: JWKS_TIMEOUT_MS + 1_000,
  });

  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    this.oauth = config.oauth;
    if (this.oauth) {
      // jose caches the key set, refetches it when a token names an unknown `kid` (at most once per
      // cooldown after a successful fetch, so garbage kids cannot hammer the issuer) and gives up on a
      // slow issuer. It remembers no failure: the circuit breaker does.
      this.keySet = createRemoteJWKSet(new URL(this.oauth.jwksUrl), {
        timeoutDuration: JWKS_TIMEOUT_MS,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
        [jwksCache]: this.fetchedKeySet as JWKSCacheInput,
      });
    }
  }

  /** The principal of a valid access token, or null for any token that fails a check. */
  async verify(token: string): Promise<Principal | null> {
    if (!this.oauth || !this.keySet) return null;
    try {
      const { payload, protectedHeader } = await jwtVerify(token, this.resolveKey, {
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
      // instead of throwing its token away, when the next fetch may go out.
      if (error instanceof KeySetFetchRefused || isKeySetOutage(error)) {
        throw new ProblemException(ProblemTypes.serviceUnavailable, 'The authorization server cannot be reached.', {
          headers: { 'Retry-After': String(this.breaker.retryAfterSeconds()) },
        });
      }
      return null;
    }
  }

  // jose's resolver while the circuit is closed. While it is open, only what the last fetched set can
  // answer without the issuer; a request that would need a fetch is refused, except the one probe.
  private readonly resolveKey: KeyResolver = async (protectedHeader, token) => {
    if (this.breaker.state === 'closed') return this.resolveFetchingIfNeeded(protectedHeader, token);
    const cached = await this.resolveFromLastFetch(protectedHeader, token);
    if (cached) {
      if (!this.keySet!.fresh) this.probeInBackground();
      return cached;
    }
    // jose would not refetch for an unknown kid within its cooldown either: the same 401 as when closed.
    if (this.keySet!.fresh && this.keySet!.coolingDown) throw new errors.JWKSNoMatchingKey();
    if (!this.breaker.tryFetch()) throw new KeySetFetchRefused();
    return this.resolveFetchingIfNeeded(protectedHeader, token);
  };

  private async resolveFetchingIfNeeded(
    protectedHeader: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): Promise<CryptoKey> {
    try {
      return await this.keySet!(protectedHeader, token);
    } catch (error) {
      if (!isKeySetOutage(error)) throw error;
      this.noteFetchFailure(error);
      // The refetch of an expired set failed: its keys still serve (see STALE_KEY_SET_LIMIT_MS).
      const stale = await this.resolveFromLastFetch(protectedHeader, token);
      if (stale) return stale;
      throw error;
    } finally {
      this.noteFetchSuccess();
    }
  }

  // A stale set is refreshed by a probe no request waits for, once the circuit lets one out.
  private probeInBackground(): void {
    if (!this.breaker.tryFetch()) return;
    this.keySet!.reload().then(
      () => this.noteFetchSuccess(),
      (error: unknown) => this.noteFetchFailure(error),
    );
  }

  private async resolveFromLastFetch(
    protectedHeader: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): Promise<CryptoKey | undefined> {
    const { uat: fetchedAt, jwks } = this.fetchedKeySet;
    if (fetchedAt === undefined || jwks === undefined) return undefined;
    if (Date.now() - fetchedAt > STALE_KEY_SET_LIMIT_MS) return undefined;
    // One local set per fetch, so its imported keys are reused.
    if (this.lastFetchedKeys?.fetchedAt !== fetchedAt) {
      this.lastFetchedKeys = { fetchedAt, resolve: createLocalJWKSet(jwks) };
    }
    try {
      return await this.lastFetchedKeys.resolve(protectedHeader, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) return undefined;
      throw error;
    }
  }

  // A new fetch time from jose is a fetch that succeeded, whoever started it; counted once.
  private noteFetchSuccess(): void {
    const fetchedAt = this.fetchedKeySet.uat;
    if (fetchedAt === undefined || fetchedAt === this.lastFetchSeen) return;
    this.lastFetchSeen = fetchedAt;
    if (this.breaker.recordSuccess()) this.logger.log({ message: 'the JWKS can be fetched again' });
  }

  // Logged once per failed fetch, not per refused request, and without the token.
  private noteFetchFailure(error: unknown): void {
    if (!this.breaker.recordFailure()) return;
    this.logger.warn({
      message: 'the JWKS could not be fetched; requests that need it are refused for a while',
      retryAfterSeconds: this.breaker.retryAfterSeconds(),
      error: (error as Error).message,
    });
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
