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
