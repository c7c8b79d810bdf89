let sequence = 0;

export interface PostInput {
  title: string;
  content: string;
  author: string;
}

export function buildPost(overrides: Partial<PostInput> = {}): PostInput {
  sequence++;
  return { title: `Post ${sequence}`, content: `Content of post ${sequence}`, author: 'Ada Lovelace', ...overrides };
}

/** The fields PostsRepository writes for a post published now, for tests that insert below HTTP. */
export function buildPublishedPostFields(overrides: Partial<PostInput> = {}) {
  return { ...buildPost(overrides), status: 'published' as const, publishedAt: new Date() };
}
