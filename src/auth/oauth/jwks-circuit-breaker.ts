export interface JwksCircuitBreakerOptions {
  /** How long fetches are refused after the first failure. */
  firstOpenMs: number;
  /** The cap of the window, which doubles with every failed probe. */
  maxOpenMs: number;
  /** How long a probe may take before another one is let through (the fetch timeout and a margin). */
  probeTimeoutMs: number;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

export type JwksCircuitState = 'closed' | 'open' | 'half-open';

/**
 * Decides whether a request may fetch the issuer's key set. Closed: always. After a failed fetch it
 * opens: fetches are refused until the window has passed. Then it is half-open: one fetch (the probe)
 * goes out while the others are still refused; its success closes the circuit, its failure reopens it
 * for twice as long, up to the cap.
 */
export class JwksCircuitBreaker {
  private readonly now: () => number;
  private openMs: number;
  // When the current window ends; null while closed.
  private openUntil: number | null = null;
  // When the probe in flight is given up on; null when there is none.
  private probeDeadline: number | null = null;

  constructor(private readonly options: JwksCircuitBreakerOptions) {
    // performance.now, not Date.now: a wall clock set back would stretch the window.
    this.now = options.now ?? (() => performance.now());
    this.openMs = options.firstOpenMs;
  }

  get state(): JwksCircuitState {
    if (this.openUntil === null) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  /** Whether a fetch may go out now; in the half-open state, true makes the caller the probe. */
  tryFetch(): boolean {
    if (this.openUntil === null) return true;
    const now = this.now();
    if (now < this.openUntil) return false;
    if (this.probeDeadline !== null && now < this.probeDeadline) return false;
    // A probe that has not reported by its deadline is given up on, so the circuit cannot stick.
    this.probeDeadline = now + this.options.probeTimeoutMs;
    return true;
  }

  /** A fetch succeeded; true when that closed an open circuit. */
  recordSuccess(): boolean {
    const wasOpen = this.openUntil !== null;
    this.openUntil = null;
    this.probeDeadline = null;
    this.openMs = this.options.firstOpenMs;
    return wasOpen;
  }

  /** A fetch failed; true when that opened the circuit or reopened it after a probe. */
  recordFailure(): boolean {
    const now = this.now();
    if (this.openUntil === null) {
      this.openUntil = now + this.openMs;
      return true;
    }
    if (this.probeDeadline !== null) {
      this.openMs = Math.min(this.openMs * 2, this.options.maxOpenMs);
      this.openUntil = now + this.openMs;
      this.probeDeadline = null;
      return true;
    }
    // Another waiter on the fetch that opened the circuit: the same failure, counted once.
    return false;
  }

  /** Seconds until a request could get the key set fetched: the window's rest, or the probe's. */
  retryAfterSeconds(): number {
    const until = Math.max(this.openUntil ?? 0, this.probeDeadline ?? 0);
    return Math.max(1, Math.ceil((until - this.now()) / 1_000));
  }
}
