import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal, ScopeName } from './principal.js';

export const IS_PUBLIC = 'auth:public';
export const REQUIRED_SCOPE = 'auth:required-scope';

/** Opts a route or controller out of authentication (health, docs). Everything else needs a bearer token. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** The scope a route needs; `admin` satisfies every scope and `posts:write` implies `posts:read`. */
export const RequireScope = (scope: ScopeName): MethodDecorator & ClassDecorator => SetMetadata(REQUIRED_SCOPE, scope);

/** The authenticated caller, as set by BearerAuthGuard. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  return context.switchToHttp().getRequest<Request & { user: Principal }>().user;
});
