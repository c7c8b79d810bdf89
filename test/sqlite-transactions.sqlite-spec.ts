import { TransactionHost } from '@nestjs-cls/transactional';
import { describe, expect, it } from 'vitest';
import { PostsRepository } from '../src/posts/posts.repository.js';
import { buildPublishedPostFields } from './factories/post.factory.js';
import { useTestApp } from './helpers/use-test-app.js';

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

// SQLite has one connection in the service: what one request's transaction does must not reach
// another request's statements or transactions (SqliteTransactionGate).
describe('transactions on the one SQLite connection', () => {
  const context = useTestApp();
  const services = () => ({
    txHost: context.app.app.get(TransactionHost),
    posts: context.app.app.get(PostsRepository),
  });

  /** A transaction that writes a post, waits for `release`, then fails (and so rolls back). */
  function failingTransaction(release: Promise<void>): { opened: Promise<void>; done: Promise<unknown> } {
    const { txHost, posts } = services();
    const opened = deferred();
    const done = txHost.withTransaction(async () => {
      await posts.insert(buildPublishedPostFields({ title: 'rolled back' }), 'api-key:1', new Date());
      opened.resolve();
      await release;
      throw new Error('the transaction fails');
    });
    return { opened: opened.promise, done: done.catch((error: unknown) => error) };
  }

  it("does not undo another request's write made while the transaction was open", async () => {
    const { posts } = services();
    const release = deferred();
    const transaction = failingTransaction(release.promise);
    await transaction.opened;

    const other = posts.insert(buildPublishedPostFields({ title: 'kept' }), 'api-key:2', new Date());
    await new Promise((resolve) => setTimeout(resolve, 20));
    release.resolve();

    expect(await transaction.done).toBeInstanceOf(Error);
    const kept = await other;
    expect(await posts.findById(kept.id)).toMatchObject({ title: 'kept' });
  });

  it('does not undo a transaction that began while another was open and committed first', async () => {
    const { txHost, posts } = services();
    const release = deferred();
    const transaction = failingTransaction(release.promise);
    await transaction.opened;

    const other = txHost.withTransaction(() =>
      posts.insert(buildPublishedPostFields({ title: 'committed' }), 'api-key:2', new Date()),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    release.resolve();

    expect(await transaction.done).toBeInstanceOf(Error);
    const committed = await other;
    expect(await posts.findById(committed.id)).toMatchObject({ title: 'committed' });
  });

  it('rolls back the failed transaction itself', async () => {
    const release = deferred();
    const before = await context.countPosts();
    const transaction = failingTransaction(release.promise);
    await transaction.opened;
    release.resolve();

    expect(await transaction.done).toBeInstanceOf(Error);
    expect(await context.countPosts()).toBe(before);
  });
});
