import { Global, Injectable, Module } from '@nestjs/common';

/**
 * The start of a shutdown, told before the server waits for the requests in flight: responses that
 * would otherwise last (long polls, event streams) end themselves then, so a SIGTERM is not held up
 * for SHUTDOWN_TIMEOUT by a client that is simply listening. graceful-shutdown.ts starts it; a test
 * that closes the app starts it through `beforeApplicationShutdown`.
 */
@Injectable()
export class Draining {
  private readonly listeners = new Set<() => void>();
  private started = false;

  get isDraining(): boolean {
    return this.started;
  }

  /** Calls `listener` once when draining starts (at once if it has); returns the unsubscribe. */
  onStart(listener: () => void): () => void {
    if (this.started) {
      listener();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const listener of this.listeners) listener();
    this.listeners.clear();
  }

  beforeApplicationShutdown(): void {
    this.start();
  }
}

@Global()
@Module({ providers: [Draining], exports: [Draining] })
export class DrainingModule {}
