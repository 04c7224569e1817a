import type { ExecutionStore } from './store.js';
import type { EventBus } from './event-bus.js';
import type { EventType } from './types.js';

type PendingEvent = { type: EventType; at: string; data?: Record<string, unknown> };

/**
 * Appends one execution's events in order. stderr lines arrive faster than one insert each
 * would allow (100,000 lines), so they are batched: flushed when the batch is full or on the
 * next tick, one transaction per batch. Writes are chained so `seq` follows arrival order.
 */
export class EventWriter {
  private batch: PendingEvent[] = [];
  private chain: Promise<void> = Promise.resolve();
  private scheduled = false;

  constructor(
    private readonly id: string,
    private readonly store: ExecutionStore,
    private readonly bus: EventBus,
    private readonly maxBatch = 500,
  ) {}

  add(type: EventType, data?: Record<string, unknown>): void {
    this.batch.push({ type, at: new Date().toISOString(), ...(data ? { data } : {}) });
    if (this.batch.length >= this.maxBatch) this.flushInBackground();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flushInBackground());
    }
  }

  /**
   * A failed write must not become an unhandled rejection (that would end the process): the
   * error stays in the chain and surfaces at the caller's awaited `flush()`.
   */
  private flushInBackground(): void {
    this.flush().catch(() => {});
  }

  /** Resolves once everything added so far is stored and published. */
  flush(): Promise<void> {
    this.scheduled = false;
    const events = this.batch;
    this.batch = [];
    if (events.length > 0) {
      this.chain = this.chain.then(async () => {
        const stored = await this.store.appendEvents(this.id, events);
        this.bus.publish(this.id, stored);
      });
    }
    return this.chain;
  }
}
