import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ApprovalOutcome, ExecutionPatch, ExecutionStore, NewEvent, StoredExecution } from './store.js';
import type {
  Approval,
  EventType,
  ExecutionError,
  ExecutionEvent,
  ExecutionFilter,
  ExecutionRecord,
  ExecutionStatus,
} from './types.js';
import { nowIso } from './types.js';
import type { SkillClass } from '../skills/types.js';

/**
 * Schema migrations: step i brings `user_version` from i to i + 1. Append only; never edit a
 * step that has shipped.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE executions (
    n                  INTEGER PRIMARY KEY AUTOINCREMENT, -- creation order, breaks created_at ties
    id                 TEXT NOT NULL UNIQUE,
    skill              TEXT NOT NULL,
    class              TEXT NOT NULL,
    persona            TEXT NOT NULL,
    requested_by       TEXT NOT NULL,
    status             TEXT NOT NULL,
    args               TEXT NOT NULL,  -- JSON
    result             TEXT,           -- JSON, NULL = null
    error              TEXT,           -- JSON, NULL = null
    approvals_required INTEGER NOT NULL,
    created_at         TEXT NOT NULL,
    started_at         TEXT,
    finished_at        TEXT,
    duration_ms        INTEGER,
    definition_hash    TEXT NOT NULL,
    expires_at         TEXT,
    idempotency_key    TEXT,
    request_hash       TEXT NOT NULL,
    last_seq           INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX executions_by_created ON executions (created_at, n);
  CREATE INDEX executions_by_skill   ON executions (skill, created_at, n);
  CREATE INDEX executions_by_status  ON executions (status, created_at, n);

  CREATE TABLE events (
    execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    at           TEXT NOT NULL,
    type         TEXT NOT NULL,
    data         TEXT,                 -- JSON object, NULL = no data
    PRIMARY KEY (execution_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE approvals (             -- rowid kept: it is the approval order
    execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    subject      TEXT NOT NULL,
    at           TEXT NOT NULL,
    PRIMARY KEY (execution_id, subject)
  );

  CREATE TABLE idempotency (
    requested_by TEXT NOT NULL,
    skill        TEXT NOT NULL,
    key          TEXT NOT NULL,
    execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (requested_by, skill, key)
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_by_execution ON idempotency (execution_id);
  `,
];

/** Every column of a record, approvals folded in as a JSON array in approval order. */
const SELECT_RECORD = `
  SELECT e.id, e.skill, e.class, e.persona, e.requested_by, e.status, e.args, e.result, e.error,
         (SELECT json_group_array(json_object('subject', a.subject, 'at', a.at) ORDER BY a.rowid)
            FROM approvals a WHERE a.execution_id = e.id) AS approvals,
         e.approvals_required, e.created_at, e.started_at, e.finished_at, e.duration_ms,
         e.definition_hash, e.expires_at, e.idempotency_key, e.request_hash, e.last_seq
    FROM executions e`;

interface RecordRow {
  id: string;
  skill: string;
  class: SkillClass;
  persona: string;
  requested_by: string;
  status: ExecutionStatus;
  args: string;
  result: string | null;
  error: string | null;
  approvals: string;
  approvals_required: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  definition_hash: string;
  expires_at: string | null;
  idempotency_key: string | null;
  request_hash: string;
  last_seq: number;
}

interface EventRow {
  seq: number;
  at: string;
  type: EventType;
  data: string | null;
}

/** The bound parameters of an insert or full-row update (JSON columns serialised). */
type RecordParams = Omit<RecordRow, 'approvals' | 'last_seq'>;

function toParams(rec: Omit<ExecutionRecord, 'approvals'>): RecordParams {
  return {
    id: rec.id,
    skill: rec.skill,
    class: rec.class,
    persona: rec.persona,
    requested_by: rec.requested_by,
    status: rec.status,
    args: JSON.stringify(rec.args ?? {}),
    result: rec.result === undefined || rec.result === null ? null : JSON.stringify(rec.result),
    error: rec.error ? JSON.stringify(rec.error) : null,
    approvals_required: rec.approvals_required,
    created_at: rec.created_at,
    started_at: rec.started_at ?? null,
    finished_at: rec.finished_at ?? null,
    duration_ms: rec.duration_ms ?? null,
    definition_hash: rec.definition_hash,
    expires_at: rec.expires_at ?? null,
    idempotency_key: rec.idempotency_key ?? null,
    request_hash: rec.request_hash,
  };
}

function fromRow(row: RecordRow): StoredExecution {
  return {
    id: row.id,
    skill: row.skill,
    class: row.class,
    persona: row.persona,
    requested_by: row.requested_by,
    status: row.status,
    args: JSON.parse(row.args) as Record<string, unknown>,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    error: row.error === null ? null : (JSON.parse(row.error) as ExecutionError),
    approvals: JSON.parse(row.approvals) as Approval[],
    approvals_required: row.approvals_required,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: row.duration_ms,
    definition_hash: row.definition_hash,
    expires_at: row.expires_at,
    idempotency_key: row.idempotency_key,
    request_hash: row.request_hash,
    last_seq: row.last_seq,
  };
}

/** `{seq, at, type, ...data}`; data can never overwrite the three fixed keys. */
function toEvent(seq: number, at: string, type: EventType, data: Record<string, unknown> | null): ExecutionEvent {
  const head = { seq, at, type };
  return data ? { ...head, ...data, ...head } : head;
}

/** A patch key set to `undefined` means "unchanged"; `null` clears the column. */
function definedOnly(patch: ExecutionPatch): ExecutionPatch {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as ExecutionPatch;
}

function hasKeys(o: Record<string, unknown> | undefined): o is Record<string, unknown> {
  return o !== undefined && Object.keys(o).length > 0;
}

/** Applies pragmas, then pending migrations in one transaction. */
function prepareDatabase(db: Database.Database): void {
  // journal_mode cannot change inside a transaction, so pragmas come first.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.transaction(() => {
    // Read inside the (immediate) transaction: another process may have migrated meanwhile.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(
        `database schema version ${version} is newer than this build supports (${MIGRATIONS.length})`,
      );
    }
    for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    if (version !== MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}

/** One prepared statement per filter combination, so each can use its index. */
type FilterShape = 'all' | 'skill' | 'status' | 'both';

function filterShape(f: ExecutionFilter): FilterShape {
  if (f.skill !== undefined && f.status !== undefined) return 'both';
  if (f.skill !== undefined) return 'skill';
  if (f.status !== undefined) return 'status';
  return 'all';
}

const COLUMNS = [
  'id', 'skill', 'class', 'persona', 'requested_by', 'status', 'args', 'result', 'error',
  'approvals_required', 'created_at', 'started_at', 'finished_at', 'duration_ms',
  'definition_hash', 'expires_at', 'idempotency_key', 'request_hash',
] as const satisfies readonly (keyof RecordParams)[];

/** Every statement, prepared once per connection. */
function prepareStatements(db: Database.Database) {
  const list = (where: string) => ({
    page: db.prepare<[object], RecordRow>(
      `${SELECT_RECORD} ${where} ORDER BY e.created_at DESC, e.n DESC LIMIT @limit OFFSET @offset`,
    ),
    count: db.prepare<[object], { total: number }>(`SELECT count(*) AS total FROM executions e ${where}`),
  });
  return {
    get: db.prepare<[string], RecordRow>(`${SELECT_RECORD} WHERE e.id = ?`),
    byStatus: db.prepare<[string], RecordRow>(`${SELECT_RECORD} WHERE e.status = ? ORDER BY e.created_at, e.n`),
    list: {
      all: list(''),
      skill: list('WHERE e.skill = @skill'),
      status: list('WHERE e.status = @status'),
      both: list('WHERE e.skill = @skill AND e.status = @status'),
    } satisfies Record<FilterShape, unknown>,
    insert: db.prepare<[RecordParams]>(
      `INSERT INTO executions (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`,
    ),
    update: db.prepare<[RecordParams]>(
      `UPDATE executions SET ${COLUMNS.filter((c) => c !== 'id')
        .map((c) => `${c} = @${c}`)
        .join(', ')} WHERE id = @id`,
    ),
    status: db.prepare<[string], { status: ExecutionStatus }>(`SELECT status FROM executions WHERE id = ?`),
    lastSeq: db.prepare<[string], { last_seq: number }>(`SELECT last_seq FROM executions WHERE id = ?`),
    setLastSeq: db.prepare<[number, string]>(`UPDATE executions SET last_seq = ? WHERE id = ?`),
    insertEvent: db.prepare<[string, number, string, string, string | null]>(
      `INSERT INTO events (execution_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)`,
    ),
    events: db.prepare<[string, number], EventRow>(
      `SELECT seq, at, type, data FROM events WHERE execution_id = ? AND seq > ? ORDER BY seq`,
    ),
    insertApproval: db.prepare<[string, string, string]>(
      `INSERT OR IGNORE INTO approvals (execution_id, subject, at) VALUES (?, ?, ?)`,
    ),
    findKey: db.prepare<[string, string, string], { execution_id: string; created_at: string }>(
      `SELECT execution_id, created_at FROM idempotency WHERE requested_by = ? AND skill = ? AND key = ?`,
    ),
    putKey: db.prepare<[string, string, string, string, string]>(
      `INSERT OR REPLACE INTO idempotency (requested_by, skill, key, execution_id, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    ),
  };
}

/** The embedded ExecutionStore: one SQLite file in WAL mode (CONTRACT section 6). */
export class SqliteExecutionStore implements ExecutionStore {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<typeof prepareStatements>;
  private readonly tx: ReturnType<SqliteExecutionStore['wrapTransactions']>;

  constructor(filename: string) {
    this.db = new Database(filename);
    try {
      prepareDatabase(this.db);
      this.stmt = prepareStatements(this.db);
      this.tx = this.wrapTransactions();
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  private wrapTransactions() {
    return {
      create: this.db.transaction(this.createTx),
      transition: this.db.transaction(this.transitionTx),
      approval: this.db.transaction(this.approvalTx),
      append: this.db.transaction(this.appendTx),
      list: this.db.transaction(this.listTx),
    };
  }

  // --- synchronous core; every public method is a thin async shell over one of these ---

  private getSync(id: string): StoredExecution | undefined {
    const row = this.stmt.get.get(id);
    return row ? fromRow(row) : undefined;
  }

  private findKeySync(requestedBy: string, skill: string, key: string, since?: string): StoredExecution | undefined {
    const hit = this.stmt.findKey.get(requestedBy, skill, key);
    if (!hit || (since !== undefined && hit.created_at < since)) return undefined;
    return this.getSync(hit.execution_id);
  }

  /** Must run inside a transaction: reads last_seq, inserts, moves last_seq. */
  private appendSync(id: string, events: readonly NewEvent[], defaultAt?: string): ExecutionEvent[] {
    const last = this.stmt.lastSeq.get(id);
    if (!last) throw new Error(`execution not found: ${id}`);
    let seq = last.last_seq;
    const out: ExecutionEvent[] = [];
    for (const e of events) {
      seq += 1;
      const at = e.at ?? defaultAt ?? nowIso();
      const data = hasKeys(e.data) ? e.data : null;
      this.stmt.insertEvent.run(id, seq, at, e.type, data ? JSON.stringify(data) : null);
      out.push(toEvent(seq, at, e.type, data));
    }
    if (seq !== last.last_seq) this.stmt.setLastSeq.run(seq, id);
    return out;
  }

  private readonly createTx = (
    rec: ExecutionRecord,
    events: readonly NewEvent[],
    since: string | undefined,
  ): { record: StoredExecution; created: boolean } => {
    const key = rec.idempotency_key;
    if (key !== null && key !== undefined) {
      const existing = this.findKeySync(rec.requested_by, rec.skill, key, since);
      if (existing) return { record: existing, created: false };
    }
    this.stmt.insert.run(toParams(rec));
    for (const a of rec.approvals ?? []) this.stmt.insertApproval.run(rec.id, a.subject, a.at);
    this.appendSync(rec.id, events, rec.created_at);
    if (key !== null && key !== undefined) {
      this.stmt.putKey.run(rec.requested_by, rec.skill, key, rec.id, rec.created_at);
    }
    return { record: this.getSync(rec.id)!, created: true };
  };

  private readonly transitionTx = (
    id: string,
    from: readonly ExecutionStatus[],
    patch: ExecutionPatch,
    events: readonly NewEvent[],
  ): StoredExecution | undefined => {
    const current = this.getSync(id);
    if (!current || !from.includes(current.status)) return undefined;
    // The immediate transaction holds the write lock, so read-then-write is a true CAS.
    this.stmt.update.run(toParams({ ...current, ...definedOnly(patch), id }));
    if (events.length > 0) this.appendSync(id, events);
    return this.getSync(id);
  };

  private readonly approvalTx = (
    id: string,
    approval: Approval,
  ): { outcome: ApprovalOutcome; record?: StoredExecution } => {
    const row = this.stmt.status.get(id);
    if (!row) return { outcome: 'not_found' };
    if (row.status !== 'pending_approval') return { outcome: 'not_pending', record: this.getSync(id)! };
    const { changes } = this.stmt.insertApproval.run(id, approval.subject, approval.at);
    if (changes === 0) return { outcome: 'duplicate', record: this.getSync(id)! };
    this.appendSync(id, [{ type: 'approved', at: approval.at, data: { subject: approval.subject } }]);
    return { outcome: 'added', record: this.getSync(id)! };
  };

  private readonly appendTx = (id: string, events: readonly NewEvent[]): ExecutionEvent[] =>
    this.appendSync(id, events);

  private readonly listTx = (filter: ExecutionFilter): { items: StoredExecution[]; total: number } => {
    const { page, count } = this.stmt.list[filterShape(filter)];
    const params = {
      skill: filter.skill ?? null,
      status: filter.status ?? null,
      limit: filter.limit,
      offset: filter.offset ?? 0,
    };
    return { items: page.all(params).map(fromRow), total: count.get(params)?.total ?? 0 };
  };

  // --- ExecutionStore ---

  async create(
    rec: ExecutionRecord,
    events: NewEvent[],
    idempotencySince?: string,
  ): Promise<{ record: StoredExecution; created: boolean }> {
    // IMMEDIATE takes the write lock up front: two processes racing on one key serialise here.
    return this.tx.create.immediate(rec, events, idempotencySince);
  }

  async findIdempotent(
    requestedBy: string,
    skill: string,
    key: string,
    since?: string,
  ): Promise<StoredExecution | undefined> {
    return this.findKeySync(requestedBy, skill, key, since);
  }

  async get(id: string): Promise<StoredExecution | undefined> {
    return this.getSync(id);
  }

  async list(filter: ExecutionFilter): Promise<{ items: StoredExecution[]; total: number }> {
    // One read transaction so items and total come from the same snapshot.
    return this.tx.list.deferred(filter);
  }

  async transition(
    id: string,
    from: readonly ExecutionStatus[],
    patch: ExecutionPatch,
    events: NewEvent[] = [],
  ): Promise<StoredExecution | undefined> {
    return this.tx.transition.immediate(id, from, patch, events);
  }

  async addApproval(
    id: string,
    approval: Approval,
  ): Promise<{ outcome: ApprovalOutcome; record?: StoredExecution }> {
    return this.tx.approval.immediate(id, approval);
  }

  async appendEvents(id: string, events: NewEvent[]): Promise<ExecutionEvent[]> {
    if (events.length === 0) return [];
    return this.tx.append.immediate(id, events);
  }

  async events(id: string, afterSeq = 0): Promise<ExecutionEvent[]> {
    return this.stmt.events
      .all(id, afterSeq)
      .map((r) => toEvent(r.seq, r.at, r.type, r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>)));
  }

  async listByStatus(status: ExecutionStatus): Promise<StoredExecution[]> {
    return this.stmt.byStatus.all(status).map(fromRow);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** The current `journal_mode` pragma ('wal' on a file; ':memory:' reports 'memory'). */
  journalMode(): string {
    return this.db.pragma('journal_mode', { simple: true }) as string;
  }

  /** The schema version (`PRAGMA user_version`). */
  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }
}

/**
 * Opens (creating when needed) `<dataDir>/ongrid.db`, applying pragmas and migrations.
 * `':memory:'` gives a private in-memory database for unit tests.
 */
export function openSqliteStore(dataDir: string): SqliteExecutionStore {
  if (dataDir === ':memory:') return new SqliteExecutionStore(':memory:');
  fs.mkdirSync(dataDir, { recursive: true });
  return new SqliteExecutionStore(path.join(dataDir, 'ongrid.db'));
}
