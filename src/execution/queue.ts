/**
 * Concurrency limit with a bounded FIFO queue (CONTRACT section 5 item 7).
 *
 * In-memory and per process: the store holds the durable state (`queued`, `running`); this only
 * decides when a task may start. A refused offer is the caller's `429 too_many_executions`.
 */

export type QueueTask = () => Promise<void>;

/** Smoothing of the running average task duration behind `retryAfterSeconds()`. */
const EWMA_WEIGHT = 0.2;
const MAX_RETRY_AFTER_SECONDS = 60;

export class ExecutionQueue {
  private readonly runningIds = new Set<string>();
  /** Map keeps insertion order: FIFO, with O(1) cancel. */
  private readonly waitingTasks = new Map<string, QueueTask>();
  private idleWaiters: Array<() => void> = [];
  private avgDurationMs: number | undefined;

  /**
   * @param onError told about a task that threw or rejected (the slot is freed either way);
   *   tasks are expected to record their own failures, so this is for logging only.
   */
  constructor(
    readonly maxRunning: number,
    readonly maxQueued: number,
    private readonly onError?: (id: string, err: unknown) => void,
  ) {
    if (!Number.isInteger(maxRunning) || maxRunning < 1) {
      throw new RangeError(`maxRunning must be an integer >= 1, got ${maxRunning}`);
    }
    if (!Number.isInteger(maxQueued) || maxQueued < 0) {
      throw new RangeError(`maxQueued must be an integer >= 0, got ${maxQueued}`);
    }
  }

  get running(): number {
    return this.runningIds.size;
  }

  get waiting(): number {
    return this.waitingTasks.size;
  }

  isWaiting(id: string): boolean {
    return this.waitingTasks.has(id);
  }

  isRunning(id: string): boolean {
    return this.runningIds.has(id);
  }

  /** Whether an offer made now would be accepted (a free slot or room in the queue). */
  hasRoom(): boolean {
    return this.runningIds.size < this.maxRunning || this.waitingTasks.size < this.maxQueued;
  }

  /**
   * Starts `task` now if a slot is free, else queues it if the queue has room.
   * Returns false (nothing happens) when both are full. `force` queues even past `maxQueued`
   * (work already admitted, e.g. an approved execution, is never refused; the running limit
   * still holds). An id may be offered only once at a time.
   */
  tryRun(id: string, task: QueueTask, force = false): boolean {
    if (this.runningIds.has(id) || this.waitingTasks.has(id)) {
      throw new Error(`execution ${id} is already in the queue`);
    }
    if (this.runningIds.size < this.maxRunning) {
      this.start(id, task);
      return true;
    }
    if (force || this.waitingTasks.size < this.maxQueued) {
      this.waitingTasks.set(id, task);
      return true;
    }
    return false;
  }

  /** Removes a waiting task so it never runs. False if it was not waiting (running or unknown). */
  cancel(id: string): boolean {
    const removed = this.waitingTasks.delete(id);
    if (removed) this.notifyIfIdle();
    return removed;
  }

  /** Empties the queue (shutdown) and returns the ids that will now never run, in FIFO order. */
  clearWaiting(): string[] {
    const ids = [...this.waitingTasks.keys()];
    this.waitingTasks.clear();
    this.notifyIfIdle();
    return ids;
  }

  /** Resolves once nothing runs and nothing waits. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * A hint for `Retry-After` when an offer was refused: about how long until one running task
   * ends and frees a place, from the average duration of finished tasks; 1 s to 60 s.
   */
  retryAfterSeconds(): number {
    if (this.avgDurationMs === undefined) return 1;
    const seconds = Math.ceil(this.avgDurationMs / this.maxRunning / 1000);
    return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds));
  }

  private start(id: string, task: QueueTask): void {
    this.runningIds.add(id);
    const startedAt = performance.now();
    // new Promise(...) also catches a task that throws before returning its promise.
    new Promise<void>((resolve) => resolve(task()))
      .catch((err: unknown) => {
        try {
          this.onError?.(id, err);
        } catch {
          // A failing logger must not leak the slot.
        }
      })
      .finally(() => this.finish(id, performance.now() - startedAt));
  }

  private finish(id: string, durationMs: number): void {
    this.runningIds.delete(id);
    this.avgDurationMs =
      this.avgDurationMs === undefined ? durationMs : this.avgDurationMs + EWMA_WEIGHT * (durationMs - this.avgDurationMs);
    this.startWaiting();
    this.notifyIfIdle();
  }

  private startWaiting(): void {
    while (this.runningIds.size < this.maxRunning && this.waitingTasks.size > 0) {
      const next = this.waitingTasks.entries().next();
      if (next.done) return;
      const [id, task] = next.value;
      this.waitingTasks.delete(id);
      this.start(id, task);
    }
  }

  private isIdle(): boolean {
    return this.runningIds.size === 0 && this.waitingTasks.size === 0;
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
