import { CreatePosts1795000000000 } from './1795000000000-create-posts.js';
import { AddApiKeysAndPostOwners1795000100000 } from './1795000100000-add-api-keys-and-post-owners.js';
import { AddPostVersionsAndIdempotencyKeys1795000200000 } from './1795000200000-add-post-versions-and-idempotency-keys.js';
import { AddEvents1795000300000 } from './1795000300000-add-events.js';
import { AddWebhooks1795000400000 } from './1795000400000-add-webhooks.js';
import { KeyEventsByPosition1795000500000 } from './1795000500000-key-events-by-position.js';
import { AddEditorialLife1795000600000 } from './1795000600000-add-editorial-life.js';

// Listed explicitly rather than globbed: the same list works from TypeScript sources (tests) and
// from the compiled build (service and CLI), and a migration can never be picked up by accident.
export const MIGRATIONS = [
  CreatePosts1795000000000,
  AddApiKeysAndPostOwners1795000100000,
  AddPostVersionsAndIdempotencyKeys1795000200000,
  AddEvents1795000300000,
  AddWebhooks1795000400000,
  KeyEventsByPosition1795000500000,
  AddEditorialLife1795000600000,
];
