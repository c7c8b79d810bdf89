import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';

// The problems of the posts routes. A post hidden from the caller is postNotFound, word for word, so
// that its existence is not revealed.

export function postNotFound(id: number): ProblemException {
  return new ProblemException(ProblemTypes.notFound, `Post ${id} does not exist.`);
}

export function forbiddenPost(id: number): ProblemException {
  return new ProblemException(
    ProblemTypes.forbidden,
    `Post ${id} belongs to another principal; only its owner or an admin may change it.`,
  );
}

export function revisionNotFound(id: number, version: number): ProblemException {
  return new ProblemException(ProblemTypes.notFound, `Post ${id} has no revision ${version}.`);
}
