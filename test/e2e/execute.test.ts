/**
 * POST /v1/skills/{name}/execute and the execution read routes, end to end: real skill packs
 * on disk, real children, the real app answering over inject (CONTRACT sections 5, 6, 12).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { compileSchema } from '../../src/skills/schema-compiler.js';
import type { NativeSkill } from '../../src/skills/types.js';
import { eventually, startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';
import { killGroup, processGone, readPid } from '../helpers/http.js';

const SECRET = 'ongrid-e2e-secret-value-9f2c';
const MiB = 1024 * 1024;

interface Execution {
  id: string;
  skill: string;
  status: string;
  args: Record<string, unknown>;
  result: unknown;
  error: { code: string; message: string; exit_code?: number; stderr_tail?: string } | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
}
interface Event {
  seq: number;
  at: string;
  type: string;
  line?: string;
  [k: string]: unknown;
}
interface ErrorBody {
  error: { code: string; message: string; details?: Array<{ path: string; message: string }> };
}

const root = tempDir('ongrid-exec-skills-');
const outside = tempDir('ongrid-exec-outside-');
const personasDir = tempDir('ongrid-exec-personas-');
const leftovers: number[] = [];
let t: TestApp;

function pack(name: string): string {
  return path.join(root, name);
}

async function execute(name: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/v1/skills/${name}/execute`,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: res.statusCode, headers: res.headers, body: res.json() as Execution & ErrorBody };
}

async function get<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await t.app.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json() as T };
}

async function events(id: string): Promise<Event[]> {
  return (await get<{ items: Event[] }>(`/v1/executions/${id}/events`)).body.items;
}

/** `/proc/<pid>/environ` of the sh that runs the entry: exactly what the service passed to exec. */
function envOf(name: string): string[] {
  return fs.readFileSync(path.join(pack(name), 'env.out'), 'utf8').split('\0').filter(Boolean);
}

before(async () => {
  process.env.ONGRID_TEST_SECRET = SECRET;
  const argsSchema = {
    type: 'object',
    properties: { dry_run: { type: 'boolean', default: true }, msg: { type: 'string' } },
  };
  writeSkill(root, { name: 'echo_args', script: 'exec cat', manifest: { schema: argsSchema } });
  writeSkill(root, {
    name: 'env_none',
    script: `/bin/cat /proc/$$/environ > env.out\necho '{}'`,
    manifest: { env_allow: [] },
  });
  writeSkill(root, {
    name: 'env_path',
    script: `/bin/cat /proc/$$/environ > env.out\necho '{}'`,
    manifest: { env_allow: ['PATH', 'ONGRID_NOT_SET_ANYWHERE'] },
  });
  writeSkill(root, { name: 'exit_three', script: `echo 'first' >&2\necho 'boom: disk full' >&2\nexit 3` });
  writeSkill(root, { name: 'self_kill', script: `echo 'going down' >&2\nkill -KILL $$` });
  writeSkill(root, { name: 'not_json', script: `echo 'hello, not json'` });
  writeSkill(root, { name: 'huge_stdout', script: `exec head -c ${100 * MiB} /dev/zero` });
  writeSkill(root, {
    name: 'stderr_flood',
    // One 10 MiB line, then 100,000 short ones; a little pause so the test can poll meanwhile.
    script: `head -c ${10 * MiB} /dev/zero | tr '\\0' x >&2\necho >&2\nseq 1 100000 >&2\nsleep 0.3\nexit 1`,
  });
  writeSkill(root, {
    name: 'ignores_term',
    script: `trap '' TERM\necho $$ > entry.pid\nsleep 600 &\necho $! > child.pid\nwait\necho '{}'`,
    manifest: { timeout_seconds: 1 },
  });
  writeSkill(root, {
    name: 'grandchild_holds_pipes',
    // The grandchild ignores SIGTERM and keeps stdout/stderr open after the entry died.
    script: `sh -c 'trap "" TERM; exec sleep 600' &\necho $! > gc.pid\nsleep 600`,
    manifest: { timeout_seconds: 1 },
  });
  writeSkill(root, {
    name: 'never_reads_stdin',
    script: `sleep 0.3\necho '{"ok": true}'`,
    manifest: { schema: { type: 'object', properties: { blob: { type: 'string' } } } },
  });
  for (const name of ['entry_deleted', 'entry_not_executable', 'entry_swapped']) {
    writeSkill(root, { name, script: `echo '{"ran": true}'` });
  }
  writeSkill(root, {
    name: 'typed',
    script: 'exec cat',
    manifest: {
      schema: {
        type: 'object',
        required: ['count'],
        additionalProperties: false,
        properties: { count: { type: 'integer', minimum: 1 }, name: { type: 'string' } },
      },
    },
  });
  writeSkill(root, { name: 'changer', script: `echo '{}'`, manifest: { class: 'mutating', schema: typedSchema() } });
  writeSkill(root, { name: 'slowish', script: `sleep 0.3\necho '{"done": true}'` });
  writeSkill(root, {
    name: 'listed',
    script: `read -r line\ncase "$line" in *'"fail":true'*) exit 1;; esac\necho '{}'`,
    manifest: { schema: { type: 'object', properties: { i: { type: 'integer' }, fail: { type: 'boolean' } } } },
  });
  writeSkill(root, {
    name: 'chatty',
    script: `echo one >&2\necho '{"answer": 42}'\necho two >&2\nprintf 'three without newline' >&2`,
  });
  fs.writeFileSync(
    path.join(personasDir, 'limited.md'),
    '---\nname: limited\ndescription: may call echo_args only\npermission_mode: read-only\ntools: [echo_args]\n---\n',
  );

  t = await startApp({
    ONGRID_SKILLS_EXTERNAL_DIRS: root,
    ONGRID_PERSONAS_DIRS: personasDir,
    ONGRID_KILL_GRACE_MS: '300',
  });

  // An unavailable skill (as a native one whose requirements are not met would be).
  const compiled = compileSchema({ type: 'object', properties: {}, required: ['x'] });
  assert.ok(compiled.ok);
  const unavailable: NativeSkill = {
    source: 'native',
    name: 'needs_gpu',
    description: 'requires a GPU',
    class: 'safe',
    category: 'test',
    schema: { type: 'object', properties: {}, required: ['x'] },
    timeoutSeconds: 5,
    validate: compiled.validate,
    available: false,
    unavailableReason: 'requires bin nvidia-smi',
    impl: async () => ({}),
    specPath: path.join(root, 'SKILL.md'),
  };
  t.services.registry.registerNative(unavailable);
});

after(async () => {
  for (const pid of leftovers) killGroup(pid);
  await t?.close();
  delete process.env.ONGRID_TEST_SECRET;
  for (const d of [root, outside, personasDir, t?.dataDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

function typedSchema() {
  return { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } };
}

describe('a run that succeeds', () => {
  test('answers 200 with the child stdout as result and a complete record', async () => {
    const r = await execute('echo_args', { args: { msg: 'hello', dry_run: false } });
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'succeeded');
    assert.deepEqual(r.body.result, { msg: 'hello', dry_run: false });
    assert.equal(r.body.error, null);
    assert.equal(r.body.skill, 'echo_args');
    assert.match(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(r.body.finished_at ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Number.isInteger(r.body.duration_ms) && r.body.duration_ms! >= 0);
    const stored = await get<Execution>(`/v1/executions/${r.body.id}`);
    assert.equal(stored.status, 200);
    assert.deepEqual(stored.body, r.body);
  });

  test('schema defaults reach the child on stdin when omitted, and are recorded as args', async () => {
    const r = await execute('echo_args', { args: { msg: 'x' } });
    assert.equal(r.body.status, 'succeeded');
    assert.deepEqual(r.body.result, { msg: 'x', dry_run: true });
    assert.deepEqual(r.body.args, { msg: 'x', dry_run: true });
  });

  test('a request without any body runs with args {} (defaults applied) and waits', async () => {
    const r = await execute('echo_args');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.result, { dry_run: true });
  });
});

describe('the child environment', () => {
  test('is empty with env_allow [] although the service environment holds a secret', async () => {
    assert.equal(process.env.ONGRID_TEST_SECRET, SECRET);
    const r = await execute('env_none', {});
    assert.equal(r.body.status, 'succeeded');
    assert.deepEqual(envOf('env_none'), []);
  });

  test('holds only PATH with env_allow ["PATH"] (names unset in the service are not invented)', async () => {
    const r = await execute('env_path', {});
    assert.equal(r.body.status, 'succeeded');
    assert.deepEqual(envOf('env_path'), [`PATH=${process.env.PATH}`]);
  });
});

describe('failure outcomes', () => {
  test('non-zero exit → failed / exit_nonzero with exit_code and stderr_tail', async () => {
    const r = await execute('exit_three', {});
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'failed');
    assert.equal(r.body.error?.code, 'exit_nonzero');
    assert.equal(r.body.error?.exit_code, 3);
    assert.match(r.body.error?.stderr_tail ?? '', /first\nboom: disk full\n$/);
    assert.equal(r.body.result, null);
  });

  test('killed by a signal → failed / signaled', async () => {
    const r = await execute('self_kill', {});
    assert.equal(r.body.status, 'failed');
    assert.equal(r.body.error?.code, 'signaled');
    assert.match(r.body.error?.message ?? '', /SIGKILL/);
    const exited = (await events(r.body.id)).find((e) => e.type === 'exited');
    assert.equal(exited?.signal, 'SIGKILL');
  });

  test('stdout that is not JSON → failed / invalid_output', async () => {
    const r = await execute('not_json', {});
    assert.equal(r.body.status, 'failed');
    assert.equal(r.body.error?.code, 'invalid_output');
    assert.equal(r.body.result, null);
  });

  test('100 MiB of stdout → child killed, failed / output_too_large', async () => {
    const r = await execute('huge_stdout', {});
    assert.equal(r.body.status, 'failed');
    assert.equal(r.body.error?.code, 'output_too_large');
    assert.equal(r.body.result, null);
  });

  test('a 10 MiB stderr line and 100,000 short ones: events stay bounded, the service stays responsive', async () => {
    const start = await execute('stderr_flood', { wait: false });
    assert.equal(start.status, 202);
    const id = start.body.id;
    let polls = 0;
    const final = await eventually(
      async () => {
        const t0 = Date.now();
        const r = await get<Execution>(`/v1/executions/${id}`);
        // A generous bound that only proves the event loop was not stuck behind the flood.
        assert.ok(Date.now() - t0 < 5000, 'a read during the flood answered');
        polls++;
        return ['failed', 'succeeded'].includes(r.body.status) ? r.body : undefined;
      },
      30_000,
      'the flood to end',
    );
    assert.ok(final);
    assert.ok(polls >= 2, 'the service answered while the child was running');
    assert.equal(final.error?.code, 'exit_nonzero');
    assert.ok(Buffer.byteLength(final.error?.stderr_tail ?? '') <= 4096);
    assert.match(final.error?.stderr_tail ?? '', /99999\n100000\n$/);

    const evs = await events(id);
    const stderr = evs.filter((e) => e.type === 'stderr');
    assert.ok(stderr.length <= 10_000, `stderr events bounded, got ${stderr.length}`);
    assert.ok(stderr.length >= 1000, 'short lines up to the cap are kept');
    // The huge line is cut, not kept whole, and says so.
    assert.ok(Buffer.byteLength(stderr[0]!.line ?? '') < 64 * 1024);
    assert.match(stderr[0]!.line ?? '', /^x+ \[\.\.\. \d+ bytes truncated\]$/);
    assert.equal(stderr[1]!.line, '1');
    const exited = evs.find((e) => e.type === 'exited');
    assert.ok(Number(exited?.stderr_lines_dropped) > 0, 'dropped lines are counted');
    assert.equal(evs.at(-1)!.type, 'failed');
  });

  test('a child that ignores SIGTERM → timed_out, killed after the grace, and gone', async () => {
    const t0 = Date.now();
    const r = await execute('ignores_term', {});
    const elapsed = Date.now() - t0;
    const entry = await readPid(path.join(pack('ignores_term'), 'entry.pid'));
    const child = await readPid(path.join(pack('ignores_term'), 'child.pid'));
    leftovers.push(entry);
    assert.equal(r.body.status, 'timed_out');
    assert.equal(r.body.error?.code, 'timeout');
    assert.ok(elapsed >= 1000, 'ran until its deadline');
    assert.ok(elapsed < 10_000, `did not hang (${elapsed} ms)`);
    // SIGKILL is delivered asynchronously: gone within a short deadline, never left running.
    await eventually(() => processGone(entry), 5000, 'the entry to be gone');
    await eventually(() => processGone(child), 5000, 'its child to be gone');
  });

  test('a grandchild holding the pipes open: the request returns by timeout + grace, the grandchild is gone', async () => {
    const t0 = Date.now();
    const r = await execute('grandchild_holds_pipes', {});
    const elapsed = Date.now() - t0;
    const gc = await readPid(path.join(pack('grandchild_holds_pipes'), 'gc.pid'));
    leftovers.push(gc);
    assert.equal(r.body.status, 'timed_out');
    assert.ok(elapsed < 1000 + 300 + 5000, `returned by timeout + grace (${elapsed} ms)`);
    await eventually(() => processGone(gc), 5000, 'the grandchild to be gone');
  });

  test('a child that never reads stdin while the args are just under the 1 MiB request limit', async () => {
    const overhead = JSON.stringify({ args: { blob: '' } }).length;
    const blob = 'y'.repeat(MiB - overhead - 16);
    const payload = JSON.stringify({ args: { blob } });
    assert.ok(payload.length < MiB);
    const r = await execute('never_reads_stdin', { args: { blob } });
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'succeeded');
    assert.deepEqual(r.body.result, { ok: true });
  });

  test('the entry deleted, made non-executable, or swapped for a symlink outside the root → spawn_failed', async () => {
    fs.rmSync(path.join(pack('entry_deleted'), 'run.sh'));
    fs.chmodSync(path.join(pack('entry_not_executable'), 'run.sh'), 0o644);
    const escape = path.join(outside, 'evil.sh');
    fs.writeFileSync(escape, `#!/bin/sh\necho '{"escaped": true}'\n`, { mode: 0o755 });
    fs.rmSync(path.join(pack('entry_swapped'), 'run.sh'));
    fs.symlinkSync(escape, path.join(pack('entry_swapped'), 'run.sh'));

    for (const name of ['entry_deleted', 'entry_not_executable', 'entry_swapped']) {
      const r = await execute(name, {});
      assert.equal(r.status, 200, name);
      assert.equal(r.body.status, 'failed', name);
      assert.equal(r.body.error?.code, 'spawn_failed', name);
      assert.equal(r.body.result, null, name);
      assert.doesNotMatch(r.body.error?.message ?? '', /\n\s+at /, 'no stack trace');
    }
  });
});

describe('grandchildren', () => {
  test('a child that exits 0 at once leaving a grandchild ends promptly, and the grandchild is gone', async () => {
    const dir = tempDir('ongrid-exec-prompt-');
    writeSkill(dir, { name: 'leaves_grandchild', script: `sleep 600 &\necho $! > gc.pid\necho '{"ok": true}'` });
    // A long grace: ending promptly proves the run did not wait for it.
    const slow = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: dir, ONGRID_KILL_GRACE_MS: '20000' });
    try {
      const t0 = Date.now();
      const res = await slow.app.inject({ method: 'POST', url: '/v1/skills/leaves_grandchild/execute' });
      const elapsed = Date.now() - t0;
      const gc = await readPid(path.join(dir, 'leaves_grandchild', 'gc.pid'));
      leftovers.push(gc);
      const body = res.json() as Execution;
      assert.equal(body.status, 'succeeded');
      assert.deepEqual(body.result, { ok: true });
      assert.ok(elapsed < 10_000, `did not wait for the 20 s grace (${elapsed} ms)`);
      await eventually(() => processGone(gc), 5000, 'the grandchild to be gone');
    } finally {
      await slow.close();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(slow.dataDir, { recursive: true, force: true });
    }
  });
});

describe('requests that never run', () => {
  test('invalid args → 400 invalid_args, one detail per error with a JSON Pointer, and no execution recorded', async () => {
    const r = await execute('typed', { args: { name: 5, extra: true } });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'invalid_args');
    const details = r.body.error.details ?? [];
    const paths = details.map((d) => d.path).sort();
    assert.deepEqual(paths, ['/count', '/extra', '/name']);
    for (const d of details) assert.equal(typeof d.message, 'string');

    const wrongType = await execute('typed', { args: { count: 0 } });
    assert.deepEqual(wrongType.body.error.details?.map((d) => d.path), ['/count']);

    const list = await get<{ items: unknown[]; total: number }>('/v1/executions?skill=typed');
    assert.equal(list.body.total, 0);
  });

  test('checks run in contract order: request shape, persona, skill, available, allowed, args', async () => {
    const code = async (name: string, body: unknown, persona?: string) => {
      const r = await execute(name, body, persona ? { 'x-ongrid-persona': persona } : {});
      return `${r.status} ${r.body.error?.code}`;
    };
    // Request shape first, before anything about personas or skills.
    assert.equal(await code('no_such_skill', { args: [] }, 'nobody'), '400 invalid_request');
    assert.equal(await code('echo_args', { wait: 'yes' }), '400 invalid_request');
    // Unknown persona (400) before unknown skill (404).
    assert.equal(await code('no_such_skill', { args: { bad: 1 } }, 'nobody'), '400 unknown_persona');
    // Unknown skill (404) before anything about the args.
    assert.equal(await code('no_such_skill', { args: { bad: 1 } }, 'limited'), '404 skill_not_found');
    // Unavailable (409) before the persona's allow list (403) and the args (400).
    assert.equal(await code('needs_gpu', { args: {} }, 'limited'), '409 skill_unavailable');
    // Not allowed (403) before invalid args (400).
    assert.equal(await code('typed', { args: {} }, 'limited'), '403 skill_not_allowed');
    assert.equal(await code('changer', { args: {} }), '403 class_not_permitted');
    // Only then the args.
    assert.equal(await code('typed', { args: {} }), '400 invalid_args');

    for (const name of ['typed', 'changer', 'needs_gpu']) {
      const list = await get<{ total: number }>(`/v1/executions?skill=${name}`);
      assert.equal(list.body.total, 0, `nothing recorded for ${name}`);
    }
  });
});

describe('wait: false', () => {
  test('answers 202 at once with Location; GET then shows it finishing', async () => {
    const r = await execute('slowish', { wait: false });
    assert.equal(r.status, 202);
    assert.equal(r.headers.location, `/v1/executions/${r.body.id}`);
    assert.ok(['queued', 'running'].includes(r.body.status));
    assert.equal(r.body.finished_at, null);
    const done = await eventually(
      async () => {
        const g = await get<Execution>(r.headers.location as string);
        return g.body.status === 'succeeded' ? g.body : undefined;
      },
      10_000,
      'the execution to finish',
    );
    assert.ok(done);
    assert.deepEqual(done.result, { done: true });
    assert.ok(done.started_at && done.finished_at);
  });
});

describe('GET /v1/executions', () => {
  const ids: string[] = [];

  before(async () => {
    // 52 executions in a known creation order; every 4th one fails.
    for (let i = 0; i < 52; i++) {
      const r = await execute('listed', { wait: false, args: { i, fail: i % 4 === 0 } });
      assert.equal(r.status, 202);
      ids.push(r.body.id);
    }
    await eventually(
      async () => (await get<{ total: number }>('/v1/executions?skill=listed&status=queued')).body.total === 0 &&
        (await get<{ total: number }>('/v1/executions?skill=listed&status=running')).body.total === 0,
      30_000,
      'all listed executions to finish',
    );
  });

  test('lists newest first with limit 50 by default and total counting every match', async () => {
    const r = await get<{ items: Execution[]; total: number }>('/v1/executions?skill=listed');
    assert.equal(r.status, 200);
    assert.equal(r.body.total, 52);
    assert.equal(r.body.items.length, 50);
    assert.deepEqual(
      r.body.items.map((e) => e.id),
      [...ids].reverse().slice(0, 50),
    );
  });

  test('filters by skill and status together', async () => {
    const failed = await get<{ items: Execution[]; total: number }>('/v1/executions?skill=listed&status=failed');
    assert.equal(failed.body.total, 13);
    assert.ok(failed.body.items.every((e) => e.status === 'failed' && e.skill === 'listed'));
    const ok = await get<{ items: Execution[]; total: number }>('/v1/executions?skill=listed&status=succeeded&limit=5');
    assert.equal(ok.body.total, 39);
    assert.equal(ok.body.items.length, 5);
    const all = await get<{ items: Execution[]; total: number }>('/v1/executions?limit=500');
    assert.ok(all.body.total > 52);
    assert.equal(all.body.items.length, Math.min(all.body.total, 500));
    assert.ok(all.body.items.some((e) => e.skill !== 'listed'));
  });

  test('an invalid limit or status is 400 invalid_request', async () => {
    for (const q of ['limit=501', 'limit=0', 'limit=abc', 'limit=-1', 'status=done']) {
      const r = await get<ErrorBody>(`/v1/executions?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'invalid_request', q);
    }
  });

  test('GET /v1/executions/{id} of an unknown id is 404 execution_not_found', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const r = await get<ErrorBody>(`/v1/executions/${id}`);
      assert.equal(r.status, 404);
      assert.equal(r.body.error.code, 'execution_not_found');
      const ev = await get<ErrorBody>(`/v1/executions/${id}/events`);
      assert.equal(ev.status, 404);
      assert.equal(ev.body.error.code, 'execution_not_found');
    }
  });
});

describe('the timeline', () => {
  test('events: created first, stderr lines in order before exited, a last line without newline, final event last', async () => {
    const r = await execute('chatty', {});
    assert.equal(r.body.status, 'succeeded');
    assert.deepEqual(r.body.result, { answer: 42 });
    const evs = await events(r.body.id);
    assert.deepEqual(
      evs.map((e) => e.type),
      ['created', 'queued', 'started', 'stderr', 'stderr', 'stderr', 'exited', 'succeeded'],
    );
    assert.deepEqual(
      evs.map((e) => e.seq),
      evs.map((_, i) => i + 1),
    );
    assert.deepEqual(
      evs.filter((e) => e.type === 'stderr').map((e) => e.line),
      ['one', 'two', 'three without newline'],
    );
    const exited = evs.find((e) => e.type === 'exited');
    assert.equal(exited?.exit_code, 0);
    for (const e of evs) assert.match(e.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const ats = evs.map((e) => e.at);
    assert.deepEqual(ats, [...ats].sort(), 'timestamps never go back');
  });

  test('one pino line per finished execution with skill, execution_id, status and duration_ms', async () => {
    const ok = await execute('chatty', {});
    const bad = await execute('exit_three', {});
    for (const rec of [ok.body, bad.body]) {
      const lines = t.logs.lines.filter((l) => l.execution_id === rec.id && l.status === rec.status);
      assert.equal(lines.length, 1, `one line for ${rec.skill}`);
      assert.equal(lines[0]!.skill, rec.skill);
      assert.equal(lines[0]!.duration_ms, rec.duration_ms);
    }
    assert.ok(!t.logs.text().includes(SECRET), 'the secret never reaches the logs');
  });
});
