import { Inject, Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import bodyParser from 'body-parser';
import contentType from 'content-type';
import type { Request, Response } from 'express';
import { HTTP_CONFIG, type HttpConfig } from '../config/config.module.js';
import { boundedBodyReader } from '../http/body/body-reader.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { AuthFailureLimiter } from '../rate-limit/auth-failure-limiter.js';
import { IS_PUBLIC, REQUIRED_SCOPE } from './auth.decorators.js';
import { insufficientScope, invalidRequest, invalidToken, missingCredentials } from './bearer-errors.js';
import type { Principal, ScopeName } from './principal.js';

type RequestWithPrincipal = Request & { user?: Principal };

interface RouteRequirements {
  isPublic: boolean;
  scope: ScopeName | undefined;
}

/**
 * The global guard: every route needs a valid bearer token in the Authorization header (RFC 6750
 * §2.1) unless it is @Public(), and the scope its @RequireScope() names. Refusals are RFC 6750's:
 * 401 without or with error="invalid_token", 400 invalid_request, 403 insufficient_scope.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  private readonly readForm: (request: Request, response: Response) => Promise<void>;
  private readonly requirements = new WeakMap<object, WeakMap<object, RouteRequirements>>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(HTTP_CONFIG) config: HttpConfig,
    private readonly failures: AuthFailureLimiter,
  ) {
    super();
    const parser = bodyParser.urlencoded({ extended: false, limit: config.bodyLimitBytes, type: () => true });
    this.readForm = boundedBodyReader(parser, { maxBytes: config.bodyLimitBytes, timeoutMs: config.bodyTimeoutMs });
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const { isPublic, scope } = this.routeRequirements(context);
    if (isPublic) return true;

    const http = context.switchToHttp();
    const request = http.getRequest<RequestWithPrincipal>();
    const response = http.getResponse<Response>();
    try {
      await this.refuseOtherTransports(request, response);
      await super.canActivate(context);
    } catch (error) {
      // The brute-force cap (rate-limit/): failures count per client IP.
      if (isAuthenticationFailure(error)) await this.failures.countFailure(request, response);
      throw error;
    }

    if (scope !== undefined && !request.user!.scopes.has(scope)) throw insufficientScope(scope);
    return true;
  }

  // Decorators are fixed once the app runs: each route's metadata is read once, not per request.
  private routeRequirements(context: ExecutionContext): RouteRequirements {
    const controller = context.getClass();
    const handler = context.getHandler();
    let byHandler = this.requirements.get(controller);
    if (byHandler === undefined) this.requirements.set(controller, (byHandler = new WeakMap()));
    let requirements = byHandler.get(handler);
    if (requirements === undefined) {
      const targets = [handler, controller];
      requirements = {
        isPublic: this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets) === true,
        scope: this.reflector.getAllAndOverride<ScopeName | undefined>(REQUIRED_SCOPE, targets),
      };
      byHandler.set(handler, requirements);
    }
    return requirements;
  }

  override handleRequest<TUser = Principal>(
    error: unknown,
    principal: TUser | false,
    info: unknown,
    _: unknown,
    status?: number,
  ): TUser {
    // A failure while verifying (database or JWKS outage) is not a verdict on the token: pass it on.
    if (error) throw error instanceof Error ? error : new Error('authentication failed', { cause: error });
    if (principal) return principal;
    // passport-http-bearer: status 400 for a malformed Authorization header, a challenge naming
    // invalid_token when the token was refused, a bare challenge when there was no token at all.
    if (status === 400) throw invalidRequest('The Authorization header must be "Bearer <token>", with one space.');
    if (typeof info === 'string' && info.includes('invalid_token')) throw invalidToken();
    throw missingCredentials();
  }

  // RFC 6750 allows the query string (§2.3) and form bodies (§2.2) as well; this API allows only the
  // header, because URLs end up in logs, histories and Referer headers. Both are refused before the
  // strategy runs (it would otherwise accept them). JSON bodies are read after authentication; an
  // access_token member there is refused by JsonBodyGuard.
  private async refuseOtherTransports(request: Request, response: Response): Promise<void> {
    if (Object.hasOwn(request.query, 'access_token')) {
      throw invalidRequest('Send the access token in the Authorization header, never in the query string.');
    }
    if (isFormBody(request)) {
      // Read before authentication, so bounded (413, 408) like every body; a form that cannot be
      // parsed holds no access_token and goes on to the 401 it would get anyway.
      await this.readForm(request, response).catch((error: unknown) => {
        if (isBodyBoundExceeded(error)) throw error;
      });
      if (request.body && Object.hasOwn(request.body as object, 'access_token')) {
        throw invalidRequest('Send the access token in the Authorization header, never in the request body.');
      }
    }
  }
}

function isBodyBoundExceeded(error: unknown): boolean {
  return error instanceof ProblemException && (error.problemType.status === 413 || error.problemType.status === 408);
}

function isAuthenticationFailure(error: unknown): boolean {
  return error instanceof ProblemException && (error.problemType.status === 401 || error.problemType.status === 400);
}

function isFormBody(request: Request): boolean {
  // Most requests (every GET) have no Content-Type: parse() would throw and the catch cost more
  // than the rest of the check.
  const header = request.headers['content-type'];
  if (header === undefined || !/^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(header)) return false;
  try {
    return contentType.parse(header).type === 'application/x-www-form-urlencoded';
  } catch {
    return false;
  }
}
