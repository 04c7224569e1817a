import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, openSqliteStore, type SqliteExecutionStore } from '../../src/execution/sqlite-store.js';
import type { ExecutionRecord } from '../../src/execution/types.js';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-store-'));
  tempDirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
/** A minimal valid record; every test names what it cares about in `over`. */
function rec(over: Partial<ExecutionRecord> = {}): ExecutionRecord {
  counter += 1;
  return {
    id: `exec-${counter}`,
    skill: 'echo',
    class: 'safe',
    persona: 'default',
    requested_by: 'alice',
    status: 'queued',
    args: {},
    result: null,
    error: null,
    approvals: [],
    approvals_required: 0,
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: null,
    finished_at: null,
    duration_ms: null,
    definition_hash: 'def-hash',
    expires_at: null,
    idempotency_key: null,
    request_hash: 'req-hash',
    ...over,
  };
}

/** A store per test, closed when the test ends. */
function memoryStore(t: { after: (fn: () => Promise<void>) => void }): SqliteExecutionStore {
  const store = openSqliteStore(':memory:');
  t.after(() => store.close());
  return store;
}

describe('SqliteExecutionStore: records', () => {
  test('every field round-trips, JSON columns included', async (t) => {
    const store = memoryStore(t);
    const full = rec({
      class: 'dangerous',
      persona: 'ops',
      requested_by: 'bob',
      status: 'failed',
      args: { name: 'x', nested: { list: [1, 2, { deep: true }] }, unicode: 'ünïcødé ✓' },
      result: { ok: false, items: [null, 1.5, 'two'] },
      error: { code: 'exit_nonzero', message: 'exited with 3', exit_code: 3, stderr_tail: 'boom\n' },
      approvals_required: 2,
      created_at: '2026-11-30T10:00:00.123Z',
      started_at: '2026-11-30T10:00:01.000Z',
      finished_at: '2026-11-30T10:00:02.500Z',
      duration_ms: 1500,
      definition_hash: 'a'.repeat(64),
      expires_at: '2026-12-01T10:00:00.000Z',
      idempotency_key: 'key-1',
      request_hash: 'b'.repeat(64),
    });
    const { record, created } = await store.create(full, [{ type: 'created' }]);
    assert.equal(created, true);
    assert.deepEqual(record, { ...full, last_seq: 1 });
    assert.deepEqual(await store.get(full.id), { ...full, last_seq: 1 });
  });

  test('nulls stay null and an empty args object stays an object', async (t) => {
    const store = memoryStore(t);
    const bare = rec();
    await store.create(bare, []);
    const got = await store.get(bare.id);
    assert.deepEqual(got, { ...bare, last_seq: 0 });
    assert.equal(got?.result, null);
    assert.equal(got?.error, null);
    assert.equal(got?.started_at, null);
    assert.equal(got?.duration_ms, null);
  });

  test('an unknown id reads as undefined', async (t) => {
    const store = memoryStore(t);
    assert.equal(await store.get('nope'), undefined);
  });

  test('a second record with the same id is refused', async (t) => {
    const store = memoryStore(t);
    const r = rec();
    await store.create(r, []);
    await assert.rejects(store.create({ ...r }, []));
  });
});

describe('SqliteExecutionStore: events', () => {
  test('initial events get seq 1..n and the creation time; appended ones continue the sequence', async (t) => {
    const store = memoryStore(t);
    const r = rec({ created_at: '2026-02-02T02:02:02.002Z' });
    await store.create(r, [{ type: 'created' }, { type: 'queued' }]);
    const appended = await store.appendEvents(r.id, [
      { type: 'started' },
      { type: 'stderr', data: { line: 'hello' } },
      { type: 'exited', at: '2026-02-02T02:02:09.000Z', data: { exit_code: 0, signal: null } },
    ]);
    assert.deepEqual(
      appended.map((e) => e.seq),
      [3, 4, 5],
    );
    const all = await store.events(r.id);
    assert.deepEqual(
      all.map((e) => [e.seq, e.type]),
      [
        [1, 'created'],
        [2, 'queued'],
        [3, 'started'],
        [4, 'stderr'],
        [5, 'exited'],
      ],
    );
    assert.equal(all[0]?.at, r.created_at);
    assert.match(all[2]!.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(all[3], { seq: 4, at: all[3]!.at, type: 'stderr', line: 'hello' });
    assert.deepEqual(all[4], { seq: 5, at: '2026-02-02T02:02:09.000Z', type: 'exited', exit_code: 0, signal: null });
    assert.deepEqual(all.slice(2), appended);
  });

  test('records report the seq of their latest event', async (t) => {
    const store = memoryStore(t);
    const r = rec({ status: 'pending_approval' });
    const { record } = await store.create(r, [{ type: 'created' }, { type: 'approval_requested' }]);
    assert.equal(record.last_seq, 2);
    const approved = await store.addApproval(r.id, { subject: 'carol', at: '2026-01-01T00:00:01.000Z' });
    assert.equal(approved.record?.last_seq, 3);
    await store.appendEvents(r.id, [{ type: 'stderr', data: { line: 'x' } }]);
    assert.equal((await store.get(r.id))?.last_seq, 4);
  });

  test('afterSeq returns only later events, in order', async (t) => {
    const store = memoryStore(t);
    const r = rec();
    await store.create(r, [{ type: 'created' }]);
    await store.appendEvents(r.id, [{ type: 'started' }, { type: 'stderr', data: { line: 'a' } }, { type: 'exited' }]);
    assert.deepEqual(
      (await store.events(r.id, 2)).map((e) => e.seq),
      [3, 4],
    );
    assert.deepEqual(await store.events(r.id, 4), []);
    assert.deepEqual(await store.events('unknown'), []);
  });

  test('each execution has its own sequence', async (t) => {
    const store = memoryStore(t);
    const a = rec();
    const b = rec();
    await store.create(a, [{ type: 'created' }]);
    await store.create(b, [{ type: 'created' }]);
    await store.appendEvents(a.id, [{ type: 'started' }]);
    await store.appendEvents(b.id, [{ type: 'started' }]);
    assert.deepEqual(
      (await store.events(a.id)).map((e) => e.seq),
      [1, 2],
    );
    assert.deepEqual(
      (await store.events(b.id)).map((e) => e.seq),
      [1, 2],
    );
  });

  test('event data cannot overwrite seq, at or type', async (t) => {
    const store = memoryStore(t);
    const r = rec();
    await store.create(r, [{ type: 'created', at: '2026-01-01T00:00:00.000Z', data: { seq: 99, at: 'x', type: 'y' } }]);
    const [ev] = await store.events(r.id);
    assert.equal(ev?.seq, 1);
    assert.equal(ev?.at, '2026-01-01T00:00:00.000Z');
    assert.equal(ev?.type, 'created');
  });

  test('appending to an unknown execution is refused', async (t) => {
    const store = memoryStore(t);
    await assert.rejects(store.appendEvents('ghost', [{ type: 'stderr', data: { line: 'x' } }]));
  });

  test('100,000 stderr events in batches of 500 are all stored, in order', async (t) => {
    // On a real file: WAL with synchronous=NORMAL is what keeps this quick.
    const store = openSqliteStore(tempDir());
    t.after(() => store.close());
    const r = rec({ status: 'running' });
    await store.create(r, [{ type: 'created' }]);
    const total = 100_000;
    for (let start = 0; start < total; start += 500) {
      const batch = Array.from({ length: 500 }, (_, i) => ({
        type: 'stderr' as const,
        data: { line: `line ${start + i}` },
      }));
      await store.appendEvents(r.id, batch);
    }
    const events = await store.events(r.id);
    assert.equal(events.length, total + 1);
    assert.equal(events.at(-1)?.seq, total + 1);
    assert.equal(events.at(-1)?.line, `line ${total - 1}`);
    assert.equal(events[50_001]?.line, 'line 50000');
    assert.equal((await store.events(r.id, total)).length, 1);
  });
});

describe('SqliteExecutionStore: transitions', () => {
  test('a transition applies its patch and events only when the status matches', async (t) => {
    const store = memoryStore(t);
    const r = rec({ status: 'queued' });
    await store.create(r, [{ type: 'created' }, { type: 'queued' }]);
    const started = await store.transition(r.id, ['queued'], { status: 'running', started_at: '2026-01-01T00:00:01.000Z' }, [
      { type: 'started' },
    ]);
    assert.equal(started?.status, 'running');
    assert.equal(started?.started_at, '2026-01-01T00:00:01.000Z');
    assert.equal(started?.last_seq, 3, 'last_seq tells which events the transition appended');
    assert.deepEqual({ ...started, status: r.status, started_at: null, last_seq: 2 }, { ...r, last_seq: 2 }, 'nothing outside the patch changed');

    const again = await store.transition(r.id, ['queued'], { status: 'running' }, [{ type: 'started' }]);
    assert.equal(again, undefined);
    assert.deepEqual(
      (await store.events(r.id)).map((e) => e.type),
      ['created', 'queued', 'started'],
    );
  });

  test('of two racing transitions from the same state exactly one wins', async (t) => {
    const store = memoryStore(t);
    const r = rec({ status: 'running' });
    await store.create(r, []);
    const outcomes = await Promise.all([
      store.transition(r.id, ['running'], { status: 'succeeded', result: { ok: true } }, [{ type: 'succeeded' }]),
      store.transition(r.id, ['running'], { status: 'cancelled' }, [{ type: 'cancelled' }]),
    ]);
    assert.equal(outcomes.filter((o) => o !== undefined).length, 1);
    assert.equal((await store.get(r.id))?.status, 'succeeded');
    assert.equal((await store.events(r.id)).length, 1);
  });

  test('a finished record can be written with result, error and timings in one step', async (t) => {
    const store = memoryStore(t);
    const r = rec({ status: 'running', started_at: '2026-01-01T00:00:00.000Z' });
    await store.create(r, []);
    const done = await store.transition(r.id, ['running'], {
      status: 'failed',
      error: { code: 'invalid_output', message: 'stdout is not JSON' },
      finished_at: '2026-01-01T00:00:00.250Z',
      duration_ms: 250,
    });
    assert.deepEqual(done?.error, { code: 'invalid_output', message: 'stdout is not JSON' });
    assert.equal(done?.duration_ms, 250);
    assert.equal(done?.started_at, '2026-01-01T00:00:00.000Z', 'columns outside the patch are kept');
  });

  test('a patch key set to undefined leaves the column alone, null clears it', async (t) => {
    const store = memoryStore(t);
    const r = rec({ status: 'pending_approval', expires_at: '2026-01-02T00:00:00.000Z', result: { a: 1 } });
    await store.create(r, []);
    const next = await store.transition(r.id, ['pending_approval'], {
      status: 'queued',
      result: undefined,
      expires_at: null,
    });
    assert.deepEqual(next?.result, { a: 1 });
    assert.equal(next?.expires_at, null);
  });

  test('a transition of an unknown execution returns undefined', async (t) => {
    const store = memoryStore(t);
    assert.equal(await store.transition('ghost', ['queued'], { status: 'running' }), undefined);
  });
});

describe('SqliteExecutionStore: approvals', () => {
  test('an approval is recorded once, with an approved event, in approval order', async (t) => {
    const store = memoryStore(t);
    const r = rec({ status: 'pending_approval', approvals_required: 2 });
    await store.create(r, [{ type: 'created' }, { type: 'approval_requested' }]);

    const first = await store.addApproval(r.id, { subject: 'carol', at: '2026-01-01T00:01:00.000Z' });
    assert.equal(first.outcome, 'added');
    assert.deepEqual(first.record?.approvals, [{ subject: 'carol', at: '2026-01-01T00:01:00.000Z' }]);

    const dup = await store.addApproval(r.id, { subject: 'carol', at: '2026-01-01T00:02:00.000Z' });
    assert.equal(dup.outcome, 'duplicate');
    assert.deepEqual(dup.record?.approvals, [{ subject: 'carol', at: '2026-01-01T00:01:00.000Z' }]);

    const second = await store.addApproval(r.id, { subject: 'bob', at: '2026-01-01T00:03:00.000Z' });
    assert.equal(second.outcome, 'added');
    assert.deepEqual(
      second.record?.approvals.map((a) => a.subject),
      ['carol', 'bob'],
    );
    assert.equal(second.record?.status, 'pending_approval', 'the store does not decide when enough approvals are in');

    const events = await store.events(r.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.subject]),
      [
        ['created', undefined],
        ['approval_requested', undefined],
        ['approved', 'carol'],
        ['approved', 'bob'],
      ],
    );
  });

  test('approving an execution that is not pending changes nothing', async (t) => {
    const store = memoryStore(t);
    const r = rec({ status: 'queued' });
    await store.create(r, [{ type: 'created' }]);
    const out = await store.addApproval(r.id, { subject: 'carol', at: '2026-01-01T00:01:00.000Z' });
    assert.equal(out.outcome, 'not_pending');
    assert.deepEqual(out.record?.approvals, []);
    assert.equal((await store.events(r.id)).length, 1);
  });

  test('approving an unknown execution reports not_found', async (t) => {
    const store = memoryStore(t);
    const out = await store.addApproval('ghost', { subject: 'carol', at: '2026-01-01T00:01:00.000Z' });
    assert.deepEqual(out, { outcome: 'not_found' });
  });
});

describe('SqliteExecutionStore: idempotency', () => {
  const since = '2026-01-01T00:00:00.000Z';

  test('the same key twice returns the first execution with created:false', async (t) => {
    const store = memoryStore(t);
    const first = rec({ idempotency_key: 'k1', created_at: '2026-01-01T10:00:00.000Z', request_hash: 'h1' });
    const retry = rec({ idempotency_key: 'k1', created_at: '2026-01-01T10:00:05.000Z', request_hash: 'h2' });
    const a = await store.create(first, [{ type: 'created' }], since);
    const b = await store.create(retry, [{ type: 'created' }], since);
    assert.equal(a.created, true);
    assert.equal(b.created, false);
    assert.equal(b.record.id, first.id);
    assert.equal(b.record.request_hash, 'h1', 'the caller compares hashes to detect a conflict');
    assert.equal(await store.get(retry.id), undefined);
    assert.equal((await store.list({ limit: 10 })).total, 1);
  });

  test('findIdempotent reads a key inside the window without writing anything', async (t) => {
    const store = memoryStore(t);
    const first = rec({ idempotency_key: 'k', requested_by: 'alice', skill: 'echo', created_at: '2026-01-01T10:00:00.000Z' });
    await store.create(first, [], since);
    assert.equal((await store.findIdempotent('alice', 'echo', 'k', since))?.id, first.id);
    assert.equal((await store.findIdempotent('alice', 'echo', 'k'))?.id, first.id, 'no window: any age');
    assert.equal(await store.findIdempotent('alice', 'echo', 'k', '2026-01-02T00:00:00.000Z'), undefined, 'too old');
    assert.equal(await store.findIdempotent('bob', 'echo', 'k', since), undefined);
    assert.equal(await store.findIdempotent('alice', 'other', 'k', since), undefined);
    assert.equal(await store.findIdempotent('alice', 'echo', 'nope', since), undefined);
  });

  test('concurrent creates with one key leave exactly one execution', async (t) => {
    const store = memoryStore(t);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => store.create(rec({ idempotency_key: 'race', created_at: '2026-01-01T10:00:00.000Z' }), [], since)),
    );
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.record.id)).size, 1);
  });

  test('a key older than the window is taken over by the new execution', async (t) => {
    const store = memoryStore(t);
    const old = rec({ idempotency_key: 'k', created_at: '2025-12-01T00:00:00.000Z' });
    await store.create(old, [], '2025-11-30T00:00:00.000Z');
    const fresh = rec({ idempotency_key: 'k', created_at: '2026-01-01T10:00:00.000Z' });
    const res = await store.create(fresh, [], since);
    assert.equal(res.created, true);
    assert.equal(res.record.id, fresh.id);
    const replay = await store.create(rec({ idempotency_key: 'k', created_at: '2026-01-01T10:00:01.000Z' }), [], since);
    assert.equal(replay.created, false);
    assert.equal(replay.record.id, fresh.id, 'the key now points at the newer execution');
    assert.ok(await store.get(old.id), 'the old execution stays in the audit log');
  });

  test('without a window any earlier use of the key matches', async (t) => {
    const store = memoryStore(t);
    const old = rec({ idempotency_key: 'k', created_at: '2020-01-01T00:00:00.000Z' });
    await store.create(old, []);
    const res = await store.create(rec({ idempotency_key: 'k' }), []);
    assert.equal(res.created, false);
    assert.equal(res.record.id, old.id);
  });

  test('different subjects or skills with the same key do not collide', async (t) => {
    const store = memoryStore(t);
    const base = { idempotency_key: 'shared', created_at: '2026-01-01T10:00:00.000Z' };
    const outcomes = [
      await store.create(rec({ ...base, requested_by: 'alice', skill: 'echo' }), [], since),
      await store.create(rec({ ...base, requested_by: 'bob', skill: 'echo' }), [], since),
      await store.create(rec({ ...base, requested_by: 'alice', skill: 'deploy' }), [], since),
    ];
    assert.deepEqual(
      outcomes.map((o) => o.created),
      [true, true, true],
    );
  });

  test('executions without a key never match each other', async (t) => {
    const store = memoryStore(t);
    const a = await store.create(rec(), [], since);
    const b = await store.create(rec(), [], since);
    assert.equal(a.created && b.created, true);
    assert.notEqual(a.record.id, b.record.id);
  });
});

describe('SqliteExecutionStore: listing', () => {
  async function seed(store: SqliteExecutionStore): Promise<string[]> {
    // created_at deliberately out of insertion order, with a tie between e2 and e3.
    const rows = [
      rec({ id: 'e1', skill: 'echo', status: 'succeeded', created_at: '2026-01-01T00:00:01.000Z' }),
      rec({ id: 'e2', skill: 'deploy', status: 'pending_approval', created_at: '2026-01-01T00:00:03.000Z' }),
      rec({ id: 'e3', skill: 'echo', status: 'failed', created_at: '2026-01-01T00:00:03.000Z' }),
      rec({ id: 'e4', skill: 'echo', status: 'succeeded', created_at: '2026-01-01T00:00:02.000Z' }),
      rec({ id: 'e5', skill: 'deploy', status: 'succeeded', created_at: '2026-01-01T00:00:04.000Z' }),
    ];
    for (const r of rows) await store.create(r, [{ type: 'created' }]);
    return rows.map((r) => r.id);
  }

  test('newest first, ties broken by creation order (later first)', async (t) => {
    const store = memoryStore(t);
    await seed(store);
    const { items, total } = await store.list({ limit: 50 });
    assert.deepEqual(
      items.map((r) => r.id),
      ['e5', 'e3', 'e2', 'e4', 'e1'],
    );
    assert.equal(total, 5);
  });

  test('filters by skill, status or both; total counts every match', async (t) => {
    const store = memoryStore(t);
    await seed(store);
    const echo = await store.list({ skill: 'echo', limit: 50 });
    assert.deepEqual(
      echo.items.map((r) => r.id),
      ['e3', 'e4', 'e1'],
    );
    assert.equal(echo.total, 3);
    const ok = await store.list({ status: 'succeeded', limit: 50 });
    assert.deepEqual(
      ok.items.map((r) => r.id),
      ['e5', 'e4', 'e1'],
    );
    const both = await store.list({ skill: 'deploy', status: 'succeeded', limit: 50 });
    assert.deepEqual(
      both.items.map((r) => r.id),
      ['e5'],
    );
    assert.equal(both.total, 1);
    const none = await store.list({ skill: 'missing', limit: 50 });
    assert.deepEqual(none, { items: [], total: 0 });
  });

  test('limit and offset page through the list while total stays the full count', async (t) => {
    const store = memoryStore(t);
    await seed(store);
    const page1 = await store.list({ limit: 2 });
    const page2 = await store.list({ limit: 2, offset: 2 });
    const page3 = await store.list({ limit: 2, offset: 4 });
    assert.deepEqual(
      [page1, page2, page3].map((p) => p.items.map((r) => r.id)),
      [['e5', 'e3'], ['e2', 'e4'], ['e1']],
    );
    assert.deepEqual(
      [page1.total, page2.total, page3.total],
      [5, 5, 5],
    );
  });

  test('listByStatus returns the matches oldest first', async (t) => {
    const store = memoryStore(t);
    await seed(store);
    assert.deepEqual(
      (await store.listByStatus('succeeded')).map((r) => r.id),
      ['e1', 'e4', 'e5'],
    );
    assert.deepEqual(await store.listByStatus('running'), []);
  });

  test('listed records carry their approvals', async (t) => {
    const store = memoryStore(t);
    await seed(store);
    await store.addApproval('e2', { subject: 'carol', at: '2026-01-01T00:05:00.000Z' });
    const { items } = await store.list({ status: 'pending_approval', limit: 10 });
    assert.deepEqual(items[0]?.approvals, [{ subject: 'carol', at: '2026-01-01T00:05:00.000Z' }]);
  });
});

describe('SqliteExecutionStore: the database file', () => {
  test('creates the data directory and uses WAL mode', async () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const store = openSqliteStore(dataDir);
    try {
      assert.ok(fs.existsSync(path.join(dataDir, 'ongrid.db')));
      assert.equal(store.journalMode(), 'wal');
    } finally {
      await store.close();
    }
  });

  test('data survives close and reopen, and the schema version stays put', async () => {
    const dataDir = tempDir();
    const r = rec({ status: 'running', args: { n: 1 }, idempotency_key: 'persist' });
    const first = openSqliteStore(dataDir);
    await first.create(r, [{ type: 'created' }]);
    await first.appendEvents(r.id, [{ type: 'stderr', data: { line: 'before restart' } }]);
    const version = first.schemaVersion();
    assert.equal(version, MIGRATIONS.length);
    await first.close();
    await first.close(); // twice is harmless

    const second = openSqliteStore(dataDir);
    try {
      assert.equal(second.schemaVersion(), version);
      assert.deepEqual(await second.get(r.id), { ...r, last_seq: 2 });
      assert.deepEqual(
        (await second.listByStatus('running')).map((x) => x.id),
        [r.id],
      );
      const events = await second.events(r.id);
      assert.deepEqual(
        events.map((e) => [e.seq, e.type]),
        [
          [1, 'created'],
          [2, 'stderr'],
        ],
      );
      const more = await second.appendEvents(r.id, [{ type: 'interrupted' }]);
      assert.equal(more[0]?.seq, 3, 'the sequence continues after a restart');
      const replay = await second.create(rec({ idempotency_key: 'persist' }), []);
      assert.equal(replay.created, false, 'idempotency keys survive a restart');
    } finally {
      await second.close();
    }
  });

  test('two connections to one file see each other’s writes', async () => {
    const dataDir = tempDir();
    const a = openSqliteStore(dataDir);
    const b = openSqliteStore(dataDir);
    try {
      const r = rec();
      await a.create(r, [{ type: 'created' }]);
      await b.appendEvents(r.id, [{ type: 'started' }]);
      assert.deepEqual(
        (await a.events(r.id)).map((e) => e.seq),
        [1, 2],
      );
      assert.equal((await b.create(rec({ ...r, id: 'other', idempotency_key: null }), [])).created, true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a database from a newer build is refused instead of being modified', () => {
    const dataDir = tempDir();
    const raw = new Database(path.join(dataDir, 'ongrid.db'));
    raw.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    raw.close();
    assert.throws(() => openSqliteStore(dataDir), /newer than this build/);
  });
});
