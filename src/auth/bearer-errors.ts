import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';

// RFC 6750 §3: every refusal names the realm; error codes only when credentials were presented.
const REALM = 'Bearer realm="posts"';

export function missingCredentials(): ProblemException {
  return new ProblemException(ProblemTypes.unauthorized, 'Send an access token as Authorization: Bearer <token>.', {
    headers: { 'WWW-Authenticate': REALM },
  });
}

export function invalidToken(): ProblemException {
  // One message for unknown, malformed, expired, revoked and badly signed tokens: telling them apart
  // would help an attacker, and a legitimate client's fix is the same (get a valid token).
  return new ProblemException(ProblemTypes.invalidToken, 'The access token is invalid, expired or revoked.', {
    headers: { 'WWW-Authenticate': `${REALM}, error="invalid_token"` },
  });
}

export function invalidRequest(detail: string): ProblemException {
  return new ProblemException(ProblemTypes.invalidRequest, detail, {
    headers: { 'WWW-Authenticate': `${REALM}, error="invalid_request"` },
  });
}

export function insufficientScope(scope: string): ProblemException {
  return new ProblemException(ProblemTypes.insufficientScope, `This request needs the ${scope} scope.`, {
    headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
  });
}
