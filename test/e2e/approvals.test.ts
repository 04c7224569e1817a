/**
 * Approvals over HTTP (CONTRACT sections 6, 7 and 12): confirmation and dual sign-off by distinct
 * subjects, self-approval, duplicates, reject, expiry (also across a restart), restart while
 * pending, racing approvers, and a definition that changed while it waited.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

interface Res {
  status: number;
  body: any;
}
type Call = (method: string, url: string, opts?: { subject?: string; persona?: string; body?: unknown }) => Promise<Res>;

/** Listens on an ephemeral loopback port; requests act as `subject` via X-Ongrid-Subject (auth off). */
async function listen(app: TestApp): Promise<Call> {
  const base = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return async (method, url, opts = {}) => {
    const headers: Record<string, string> = {};
    if (opts.subject) headers['x-ongrid-subject'] = opts.subject;
    if (opts.persona) headers['x-ongrid-persona'] = opts.persona;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + url, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

const tmp: string[] = [];
after(() => {
  for (const d of tmp) fs.rmSync(d, { recursive: true, force: true });
});
function mkdir(prefix: string): string {
  const d = tempDir(prefix);
  tmp.push(d);
  return d;
}

/** Appends the args line it got on stdin to runs.log in its folder: one line per run. */
const RECORDING_SCRIPT = 'IFS= read -r line\necho "$line" >> runs.log\necho \'{"ok":true}\'';

function runsWith(skillDir: string, tag: string): number {
  const f = path.join(skillDir, 'runs.log');
  if (!fs.existsSync(f)) return 0;
  return fs.readFileSync(f, 'utf8').split('\n').filter((l) => l.includes(`"tag":"${tag}"`)).length;
}

function setup(): { root: string; pdir: string; danger: string; mutate: string } {
  const root = mkdir('ongrid-appr-skills-');
  const pdir = mkdir('ongrid-appr-personas-');
  const danger = writeSkill(root, { name: 'wipe_disk', script: RECORDING_SCRIPT, manifest: { class: 'dangerous' } });
  const mutate = writeSkill(root, { name: 'restart_service', script: RECORDING_SCRIPT, manifest: { class: 'mutating' } });
  fs.writeFileSync(path.join(pdir, 'sre.md'), '---\nname: sre\ndescription: dual\npermission_mode: dual-sign-required\n---\n');
  fs.writeFileSync(path.join(pdir, 'operator.md'), '---\nname: operator\ndescription: confirm\npermission_mode: mutating-with-confirm\n---\n');
  return { root, pdir, danger, mutate };
}

async function finalOf(call: Call, id: string, timeoutMs = 10_000): Promise<any> {
  return eventually(
    async () => {
      const r = await call('GET', `/v1/executions/${id}`);
      return ['pending_approval', 'queued', 'running'].includes(r.body.status) ? undefined : r.body;
    },
    timeoutMs,
    `execution ${id} to end`,
  );
}

async function eventTypes(call: Call, id: string): Promise<string[]> {
  const r = await call('GET', `/v1/executions/${id}/events`);
  assert.equal(r.status, 200);
  return r.body.items.map((e: { type: string }) => e.type);
}

async function closeApp(app: TestApp): Promise<void> {
  await app.close();
}

describe('approvals on one running service', () => {
  const s = setup();
  let app: TestApp;
  let call: Call;

  before(async () => {
    app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: s.root, ONGRID_PERSONAS_DIRS: s.pdir });
    call = await listen(app);
  });
  after(async () => {
    await closeApp(app);
    fs.rmSync(app.dataDir, { recursive: true, force: true });
  });

  async function request(skill: string, persona: string, tag: string): Promise<Res> {
    const r = await call('POST', `/v1/skills/${skill}/execute`, { subject: 'alice', persona, body: { args: { tag } } });
    assert.equal(r.status, 202);
    assert.equal(r.body.status, 'pending_approval');
    return r;
  }

  test('a dual sign-off by two distinct subjects runs the child exactly once', async () => {
    const { body: pending } = await request('wipe_disk', 'sre', 'dual');
    assert.equal(pending.approvals_required, 2);

    const first = await call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'bob' });
    assert.equal(first.status, 200);
    assert.equal(first.body.status, 'pending_approval', 'one of two approvals does not release it');
    assert.deepEqual(first.body.approvals.map((a: { subject: string }) => a.subject), ['bob']);
    assert.equal(runsWith(s.danger, 'dual'), 0);

    const second = await call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'carol' });
    assert.equal(second.status, 200);
    assert.ok(['queued', 'running', 'succeeded'].includes(second.body.status), `status ${second.body.status}`);

    const done = await finalOf(call, pending.id);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.result, { ok: true });
    assert.deepEqual(done.approvals.map((a: { subject: string }) => a.subject), ['bob', 'carol']);
    for (const a of done.approvals) assert.match(a.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(runsWith(s.danger, 'dual'), 1);

    const types = await eventTypes(call, pending.id);
    assert.deepEqual(types.filter((t) => t === 'approved').length, 2);
    assert.equal(types.filter((t) => t === 'started').length, 1);
    assert.ok(types.indexOf('approval_requested') < types.indexOf('approved'));
    assert.ok(types.lastIndexOf('approved') < types.indexOf('started'));
  });

  test('the requester cannot approve their own execution: 403 self_approval', async () => {
    const { body: pending } = await request('restart_service', 'operator', 'self');
    const res = await call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'alice' });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'self_approval');
    const now = await call('GET', `/v1/executions/${pending.id}`);
    assert.equal(now.body.status, 'pending_approval');
    assert.deepEqual(now.body.approvals, []);
    assert.equal(runsWith(s.mutate, 'self'), 0);
  });

  test('the same approver counts once: the second approval is 409 already_approved', async () => {
    const { body: pending } = await request('wipe_disk', 'sre', 'twice');
    assert.equal((await call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'bob' })).status, 200);
    const again = await call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'bob' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'already_approved');
    const now = await call('GET', `/v1/executions/${pending.id}`);
    assert.equal(now.body.status, 'pending_approval');
    assert.equal(now.body.approvals.length, 1);
    assert.equal(runsWith(s.danger, 'twice'), 0);
  });

  test('a rejected execution ends as rejected, never runs, and cannot be approved afterwards', async () => {
    const { body: pending } = await request('restart_service', 'operator', 'reject');
    const rej = await call('POST', `/v1/executions/${pending.id}/reject`, { subject: 'bob', body: { reason: 'not during business hours' } });
    assert.equal(rej.status, 200);
    assert.equal(rej.body.status, 'rejected');
    assert.ok(rej.body.finished_at);

    const approve = await call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'carol' });
    assert.equal(approve.status, 409);
    assert.equal(approve.body.error.code, 'not_pending');
    const again = await call('POST', `/v1/executions/${pending.id}/reject`, { subject: 'carol' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'not_pending');

    const types = await eventTypes(call, pending.id);
    assert.ok(types.includes('rejected'));
    assert.ok(!types.includes('started') && !types.includes('queued'), `events: ${types.join(',')}`);
    assert.equal((await call('GET', `/v1/executions/${pending.id}`)).body.status, 'rejected');
    assert.equal(runsWith(s.mutate, 'reject'), 0);
  });

  test('approving an unknown execution is 404 execution_not_found', async () => {
    const res = await call('POST', '/v1/executions/00000000-0000-0000-0000-000000000000/approve', { subject: 'bob' });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'execution_not_found');
  });

  test('approvers see args, class, persona, requested_by and definition_hash', async () => {
    const { body: pending } = await request('wipe_disk', 'sre', 'inspect');
    const res = await call('GET', `/v1/executions/${pending.id}`, { subject: 'bob' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.args, { tag: 'inspect' });
    assert.equal(res.body.class, 'dangerous');
    assert.equal(res.body.persona, 'sre');
    assert.equal(res.body.requested_by, 'alice');
    assert.equal(res.body.skill, 'wipe_disk');
    assert.equal(res.body.approvals_required, 2);
    assert.match(res.body.definition_hash, /^[0-9a-f]{64}$/);
  });

  test('two approvals racing for the last two slots run the child exactly once', async () => {
    const { body: pending } = await request('wipe_disk', 'sre', 'race');
    const [a, b] = await Promise.all([
      call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'bob' }),
      call('POST', `/v1/executions/${pending.id}/approve`, { subject: 'carol' }),
    ]);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(b.status, 200, JSON.stringify(b.body));
    const done = await finalOf(call, pending.id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.approvals.length, 2);
    // Let any second (wrong) run reach the child before counting: wait for the queue to drain.
    await eventually(() => app.services.queue.running === 0 && app.services.queue.waiting === 0, 5000, 'queue idle');
    assert.equal(runsWith(s.danger, 'race'), 1);
    const types = await eventTypes(call, pending.id);
    assert.equal(types.filter((t) => t === 'started').length, 1);
    assert.equal(types.filter((t) => t === 'queued').length, 1);
  });

  test('three approvers racing for two slots still run the child exactly once', async () => {
    const { body: pending } = await request('wipe_disk', 'sre', 'race3');
    const answers = await Promise.all(
      ['bob', 'carol', 'dave'].map((subject) => call('POST', `/v1/executions/${pending.id}/approve`, { subject })),
    );
    for (const a of answers) {
      assert.ok(a.status === 200 || (a.status === 409 && a.body.error.code === 'not_pending'), JSON.stringify(a.body));
    }
    const done = await finalOf(call, pending.id);
    assert.equal(done.status, 'succeeded');
    await eventually(() => app.services.queue.running === 0 && app.services.queue.waiting === 0, 5000, 'queue idle');
    assert.equal(runsWith(s.danger, 'race3'), 1);
    assert.equal((await eventTypes(call, pending.id)).filter((t) => t === 'started').length, 1);
  });

  test('an entry script edited while waiting: the last approval answers 200 rejected / definition_changed', async () => {
    const root = mkdir('ongrid-appr-edit-');
    const dir = writeSkill(root, { name: 'edit_me', script: RECORDING_SCRIPT, manifest: { class: 'dangerous' } });
    // A second app on its own root so editing this script disturbs no other test.
    const app2 = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: s.pdir });
    try {
      const call2 = await listen(app2);
      const r = await call2('POST', '/v1/skills/edit_me/execute', { subject: 'alice', persona: 'sre', body: { args: { tag: 'edited' } } });
      assert.equal(r.status, 202);
      const hashBefore = r.body.definition_hash;
      assert.equal((await call2('POST', `/v1/executions/${r.body.id}/approve`, { subject: 'bob' })).status, 200);

      fs.writeFileSync(path.join(dir, 'run.sh'), `#!/bin/sh\n${RECORDING_SCRIPT}\necho tampered >&2\n`, { mode: 0o755 });

      const last = await call2('POST', `/v1/executions/${r.body.id}/approve`, { subject: 'carol' });
      assert.equal(last.status, 200);
      assert.equal(last.body.status, 'rejected');
      assert.equal(last.body.error.code, 'definition_changed');
      assert.equal(last.body.definition_hash, hashBefore, 'the record keeps the hash that was approved');

      const now = await call2('GET', `/v1/executions/${r.body.id}`);
      assert.equal(now.body.status, 'rejected');
      const types = await eventTypes(call2, r.body.id);
      assert.ok(!types.includes('started'), `events: ${types.join(',')}`);
      assert.equal(runsWith(dir, 'edited'), 0);
    } finally {
      await closeApp(app2);
      fs.rmSync(app2.dataDir, { recursive: true, force: true });
    }
  });
});

describe('definition changes seen by the hot reload', () => {
  test('an edited manifest or a removed skill makes the last approval answer rejected / definition_changed', async () => {
    const root = mkdir('ongrid-appr-watch-');
    const pdir = setup().pdir;
    const edited = writeSkill(root, { name: 'edited_manifest', script: RECORDING_SCRIPT, manifest: { class: 'mutating' } });
    const removed = writeSkill(root, { name: 'removed_skill', script: RECORDING_SCRIPT, manifest: { class: 'mutating' } });
    const app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: pdir, ONGRID_SKILLS_WATCH: 'true' });
    try {
      const call = await listen(app);
      const ask = (skill: string) =>
        call('POST', `/v1/skills/${skill}/execute`, { subject: 'alice', persona: 'operator', body: { args: { tag: skill } } });
      const a = await ask('edited_manifest');
      const b = await ask('removed_skill');
      assert.equal(a.status, 202);
      assert.equal(b.status, 202);

      const manifest = JSON.parse(fs.readFileSync(path.join(edited, 'skill.json'), 'utf8'));
      fs.writeFileSync(path.join(edited, 'skill.json'), JSON.stringify({ ...manifest, description: 'now does something else' }));
      fs.rmSync(removed, { recursive: true, force: true });
      await eventually(
        async () =>
          (await call('GET', '/v1/skills/edited_manifest')).body.description === 'now does something else' &&
          (await call('GET', '/v1/skills/removed_skill')).status === 404,
        8000,
        'the reload',
      );

      for (const [id, dir, tag] of [[a.body.id, edited, 'edited_manifest'], [b.body.id, removed, 'removed_skill']] as const) {
        const res = await call('POST', `/v1/executions/${id}/approve`, { subject: 'bob' });
        assert.equal(res.status, 200);
        assert.equal(res.body.status, 'rejected', tag);
        assert.equal(res.body.error.code, 'definition_changed', tag);
        assert.equal(runsWith(dir, tag), 0);
      }
    } finally {
      await closeApp(app);
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });
});

describe('approval TTL', () => {
  const s = setup();

  test('a pending approval past its TTL shows expired within ~2 s and can no longer be approved', async () => {
    const app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: s.root, ONGRID_PERSONAS_DIRS: s.pdir, ONGRID_APPROVAL_TTL_SECONDS: '1' });
    try {
      const call = await listen(app);
      const r = await call('POST', '/v1/skills/restart_service/execute', { subject: 'alice', persona: 'operator', body: { args: { tag: 'ttl' } } });
      assert.equal(r.status, 202);
      // TTL 1 s + the contract's 2 s, with slack for a loaded machine.
      const expired = await eventually(
        async () => {
          const g = await call('GET', `/v1/executions/${r.body.id}`);
          return g.body.status === 'expired' ? g.body : undefined;
        },
        6000,
        'expiry',
      );
      assert.ok(expired.finished_at);
      const approve = await call('POST', `/v1/executions/${r.body.id}/approve`, { subject: 'bob' });
      assert.equal(approve.status, 409);
      assert.equal(approve.body.error.code, 'not_pending');
      assert.ok((await eventTypes(call, r.body.id)).includes('expired'));
      assert.equal(runsWith(s.mutate, 'ttl'), 0);
    } finally {
      await closeApp(app);
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });
});

describe('approval TTL enforced at the moment of approval', () => {
  const s = setup();

  // KNOWN BUG (src/execution/executor.ts, Executor.approve): expiry is only applied by the
  // 500 ms sweep, so an approval that lands after expires_at but before the next sweep is
  // accepted and runs the child. Fix: in approve() (and reject()), when the record is
  // pending_approval and expires_at <= now, apply the same expire transition as expireDue()
  // for that one record and answer 409 not_pending.
  test('an approval arriving after the TTL, before the expiry sweep ran, is 409 not_pending and never runs', async () => {
    const app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: s.root, ONGRID_PERSONAS_DIRS: s.pdir, ONGRID_APPROVAL_TTL_SECONDS: '1' });
    try {
      const call = await listen(app);
      const r = await call('POST', '/v1/skills/restart_service/execute', { subject: 'alice', persona: 'operator', body: { args: { tag: 'late' } } });
      assert.equal(r.status, 202);
      const expiresAt = Date.parse(r.body.expires_at);
      // Approve right after the deadline: the sweep (every 500 ms) has most likely not run yet.
      await eventually(() => Date.now() > expiresAt, 5000, 'the TTL to pass');
      const late = await call('POST', `/v1/executions/${r.body.id}/approve`, { subject: 'bob' });
      await eventually(() => app.services.queue.running === 0 && app.services.queue.waiting === 0, 5000, 'queue idle');
      assert.equal(runsWith(s.mutate, 'late'), 0, 'BUG executor.approve: a late approval ran the child after the approval TTL');
      assert.equal(late.status, 409, `BUG executor.approve: approval after expires_at answered ${late.status} ${late.body.status}`);
      assert.equal(late.body.error.code, 'not_pending');
    } finally {
      await closeApp(app);
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });
});

describe('approvals across a restart', () => {
  const s = setup();

  test('a pending execution survives a restart and runs once approved on the new process', async () => {
    const dataDir = mkdir('ongrid-appr-data-');
    const env = { ONGRID_SKILLS_EXTERNAL_DIRS: s.root, ONGRID_PERSONAS_DIRS: s.pdir, ONGRID_DATA_DIR: dataDir };
    const first = await startApp(env);
    const call1 = await listen(first);
    const r = await call1('POST', '/v1/skills/restart_service/execute', { subject: 'alice', persona: 'operator', body: { args: { tag: 'restart' } } });
    assert.equal(r.status, 202);
    await closeApp(first);

    const second = await startApp(env);
    try {
      const call2 = await listen(second);
      const still = await call2('GET', `/v1/executions/${r.body.id}`);
      assert.equal(still.body.status, 'pending_approval');
      const ok = await call2('POST', `/v1/executions/${r.body.id}/approve`, { subject: 'bob' });
      assert.equal(ok.status, 200);
      const done = await finalOf(call2, r.body.id);
      assert.equal(done.status, 'succeeded');
      assert.equal(runsWith(s.mutate, 'restart'), 1);
    } finally {
      await closeApp(second);
    }
  });

  test('a pending execution whose TTL passed while the service was down shows expired after start', async () => {
    const dataDir = mkdir('ongrid-appr-data-');
    const env = { ONGRID_SKILLS_EXTERNAL_DIRS: s.root, ONGRID_PERSONAS_DIRS: s.pdir, ONGRID_DATA_DIR: dataDir };
    const first = await startApp({ ...env, ONGRID_APPROVAL_TTL_SECONDS: '1' });
    const call1 = await listen(first);
    const r = await call1('POST', '/v1/skills/restart_service/execute', { subject: 'alice', persona: 'operator', body: { args: { tag: 'downttl' } } });
    assert.equal(r.status, 202);
    const expiresAt = Date.parse(r.body.expires_at);
    assert.equal((await call1('GET', `/v1/executions/${r.body.id}`)).body.status, 'pending_approval');
    await closeApp(first);

    // Down until the TTL has passed (poll the clock, no fixed sleep).
    await eventually(() => Date.now() > expiresAt + 50, 5000, 'the TTL to pass');

    const second = await startApp(env);
    try {
      const call2 = await listen(second);
      const now = await call2('GET', `/v1/executions/${r.body.id}`);
      assert.equal(now.body.status, 'expired');
      assert.ok(
        second.logs.messages().some((m) => m.includes('expired') && m.includes(r.body.id)),
        'the new process is the one that expired it',
      );
      const approve = await call2('POST', `/v1/executions/${r.body.id}/approve`, { subject: 'bob' });
      assert.equal(approve.status, 409);
      assert.equal(approve.body.error.code, 'not_pending');
      assert.equal(runsWith(s.mutate, 'downttl'), 0);
    } finally {
      await closeApp(second);
    }
  });
});
