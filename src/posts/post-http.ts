import type { Response } from 'express';
import { parseEntityTagCondition } from '../http/entity-tags.js';
import { postETag, writePrecondition, type WritePrecondition } from './post-etag.js';
import type { Post } from './post.entity.js';
import { toPostResource, type PostResource } from './post.resource.js';

/** A post as the response body, with its ETag: what create, replace, patch and the restores answer. */
export function represent(post: Post, response: Response): PostResource {
  response.setHeader('ETag', postETag(post));
  return toPostResource(post);
}

export function preconditionOf(id: number, ifMatch: string | undefined): WritePrecondition {
  return writePrecondition(id, parseEntityTagCondition(ifMatch, 'If-Match'));
}
