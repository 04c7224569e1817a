import { EventEmitter } from 'node:events';
import type { ExecutionEvent } from './types.js';

/**
 * Live events of executions in this process, for SSE subscribers. The store is the truth;
 * the bus only carries what was just appended, so a subscriber reads the past from the store
 * and dedupes by `seq`.
 */
export class EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(executionId: string, events: readonly ExecutionEvent[]): void {
    if (events.length > 0) this.emitter.emit(executionId, events);
  }

  subscribe(executionId: string, listener: (events: readonly ExecutionEvent[]) => void): () => void {
    this.emitter.on(executionId, listener);
    return () => this.emitter.off(executionId, listener);
  }
}
