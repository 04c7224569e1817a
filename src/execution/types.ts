import type { SkillClass } from '../skills/types.js';

export type ExecutionStatus =
  | 'pending_approval'
  | 'queued'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed_out'
  | 'cancelled'
  | 'rejected'
  | 'expired'
  | 'interrupted';

/** Statuses after which nothing changes any more (SSE closes after their event). */
export const FINAL_STATUSES: readonly ExecutionStatus[] = [
  'succeeded',
  'failed',
  'timed_out',
  'cancelled',
  'rejected',
  'expired',
  'interrupted',
];

export function isFinal(status: ExecutionStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

export type EventType =
  | 'created'
  | 'approval_requested'
  | 'approved'
  | 'rejected'
  | 'expired'
  | 'queued'
  | 'started'
  | 'stderr'
  | 'exited'
  | 'succeeded'
  | 'failed'
  | 'timed_out'
  | 'cancelled'
  | 'interrupted';

export interface ExecutionError {
  code: string;
  message: string;
  exit_code?: number;
  stderr_tail?: string;
}

export interface Approval {
  subject: string;
  /** RFC 3339 UTC with milliseconds. */
  at: string;
}

/**
 * One execution as stored and as served (the public `Execution` is the fields up to
 * `duration_ms`; the rest is internal bookkeeping the HTTP layer strips or reshapes).
 */
export interface ExecutionRecord {
  id: string;
  skill: string;
  class: SkillClass;
  persona: string;
  requested_by: string;
  status: ExecutionStatus;
  args: Record<string, unknown>;
  result: unknown;
  error: ExecutionError | null;
  approvals: Approval[];
  approvals_required: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  /** sha256 over the skill's manifest and entry file content at request time. */
  definition_hash: string;
  /** When a pending approval expires (RFC 3339), else null. */
  expires_at: string | null;
  idempotency_key: string | null;
  /** sha256 of the canonical JSON of the args as requested (before defaults), for idempotency. */
  request_hash: string;
}

export interface ExecutionEvent {
  seq: number;
  at: string;
  type: EventType;
  /** Type-specific data: `line` (stderr), `exit_code`/`signal` (exited), `subject` (approvals)... */
  [key: string]: unknown;
}

export interface ExecutionFilter {
  skill?: string;
  status?: ExecutionStatus;
  limit: number;
  offset?: number;
}

/** Current UTC time as RFC 3339 with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}
