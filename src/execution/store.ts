import type {
  Approval,
  EventType,
  ExecutionEvent,
  ExecutionFilter,
  ExecutionRecord,
  ExecutionStatus,
} from './types.js';

/**
 * Persistence of executions, their events and approvals: the audit log.
 *
 * Asynchronous on purpose: the embedded default is SQLite (better-sqlite3, synchronous
 * underneath) but a PostgreSQL implementation shared by several replicas must fit the same
 * shape. Every race that matters (idempotency keys, double approvals, a status moving twice)
 * is settled inside the store by a constraint or a conditional update, never by the caller.
 */
export interface ExecutionStore {
  /**
   * Inserts a new execution together with its first events.
   * When `rec.idempotency_key` is set and an execution with the same (requested_by, skill, key)
   * created after `idempotencySince` exists, nothing is inserted and that one is returned
   * with `created: false`.
   */
  create(
    rec: ExecutionRecord,
    events: Array<{ type: EventType; data?: Record<string, unknown> }>,
    idempotencySince?: string,
  ): Promise<{ record: ExecutionRecord; created: boolean }>;

  get(id: string): Promise<ExecutionRecord | undefined>;

  list(filter: ExecutionFilter): Promise<{ items: ExecutionRecord[]; total: number }>;

  /**
   * Moves an execution to a new state only if its current status is one of `from`
   * (compare-and-set), applying `patch` and appending `events` in the same transaction.
   * Returns the updated record, or undefined when the status did not match.
   */
  transition(
    id: string,
    from: readonly ExecutionStatus[],
    patch: Partial<Omit<ExecutionRecord, 'id'>>,
    events?: Array<{ type: EventType; data?: Record<string, unknown> }>,
  ): Promise<ExecutionRecord | undefined>;

  /**
   * Records an approval if the execution is still pending and the subject has not approved it
   * yet. Returns the record after the action and what happened.
   */
  addApproval(
    id: string,
    approval: Approval,
  ): Promise<{ outcome: 'added' | 'duplicate' | 'not_pending' | 'not_found'; record?: ExecutionRecord }>;

  /** Appends events (stderr lines come in batches). Assigns `seq` (1, 2, ... per execution). */
  appendEvents(
    id: string,
    events: Array<{ type: EventType; at?: string; data?: Record<string, unknown> }>,
  ): Promise<ExecutionEvent[]>;

  /** Events with seq > afterSeq, in seq order. */
  events(id: string, afterSeq?: number): Promise<ExecutionEvent[]>;

  /** Executions in `status`, oldest first (used at start: leftovers, pending approvals). */
  listByStatus(status: ExecutionStatus): Promise<ExecutionRecord[]>;

  close(): Promise<void>;
}
