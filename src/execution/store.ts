import type {
  Approval,
  EventType,
  ExecutionEvent,
  ExecutionFilter,
  ExecutionRecord,
  ExecutionStatus,
} from './types.js';

/** An event to append; `seq` is assigned by the store, `at` defaults to now. */
export interface NewEvent {
  type: EventType;
  at?: string;
  data?: Record<string, unknown>;
}

/**
 * A record as the store returns it: with `last_seq`, the seq of its latest event (0 when none),
 * so a caller can tell which events a transition appended (`last_seq - events.length`).
 * Internal bookkeeping: not part of the public `Execution`.
 */
export interface StoredExecution extends ExecutionRecord {
  last_seq: number;
}

/**
 * Columns a transition may change. Approvals live in their own table (see addApproval) and
 * `last_seq` is the store's own; a key set to `undefined` means "unchanged", `null` clears.
 */
export type ExecutionPatch = Partial<Omit<ExecutionRecord, 'id' | 'approvals' | 'last_seq'>>;

export type ApprovalOutcome = 'added' | 'duplicate' | 'not_pending' | 'not_found';

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
   * with `created: false` (the caller compares `request_hash` to tell a replay from a conflict).
   * Without `idempotencySince` any existing key matches; an older key is taken over.
   * Initial events get seq 1..n; their `at` defaults to `rec.created_at`.
   */
  create(
    rec: ExecutionRecord,
    events: NewEvent[],
    idempotencySince?: string,
  ): Promise<{ record: StoredExecution; created: boolean }>;

  /**
   * The execution an idempotency key points at, when it was created at or after `since`
   * (any age without `since`). Read-only: lets a replay be answered before admission control.
   */
  findIdempotent(requestedBy: string, skill: string, key: string, since?: string): Promise<StoredExecution | undefined>;

  get(id: string): Promise<StoredExecution | undefined>;

  /** Newest first (`created_at`, then creation order); `total` counts every match. */
  list(filter: ExecutionFilter): Promise<{ items: StoredExecution[]; total: number }>;

  /**
   * Moves an execution to a new state only if its current status is one of `from`
   * (compare-and-set), applying `patch` (the new `status` included) and appending `events`
   * in the same transaction. Returns the updated record, or undefined when the execution
   * does not exist or its status did not match.
   */
  transition(
    id: string,
    from: readonly ExecutionStatus[],
    patch: ExecutionPatch,
    events?: NewEvent[],
  ): Promise<StoredExecution | undefined>;

  /**
   * Records an approval if the execution is still `pending_approval` and the subject has not
   * approved it yet; an added one also appends an `approved` event with `{subject}`.
   * Checked in this order: not_found, not_pending, duplicate, added. Returns what happened and
   * the record after the action (absent only for not_found). Does not change the status: the
   * caller decides whether enough approvals were collected.
   */
  addApproval(
    id: string,
    approval: Approval,
  ): Promise<{ outcome: ApprovalOutcome; record?: StoredExecution }>;

  /**
   * Appends events (stderr lines come in batches) in one transaction. Assigns `seq`
   * (1, 2, ... per execution). Rejects when the execution does not exist.
   */
  appendEvents(id: string, events: NewEvent[]): Promise<ExecutionEvent[]>;

  /** Events with seq > afterSeq, in seq order. */
  events(id: string, afterSeq?: number): Promise<ExecutionEvent[]>;

  /** Executions in `status`, oldest first (used at start: leftovers, pending approvals). */
  listByStatus(status: ExecutionStatus): Promise<StoredExecution[]>;

  /** Closes the database; safe to call twice. */
  close(): Promise<void>;
}
