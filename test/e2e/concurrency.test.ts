/**
 * Admission control and cancellation over HTTP (CONTRACT section 5 items 7 and cancel):
 * the running limit, the bounded queue with 429, and cancel of queued, running and finished runs.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';
import { killGroup, processGone, readPid } from '../helpers/http.js';

interface Execution {
  id: string;
  status: string;
  error: { code: string } | null;
}
interface Event {
  type: string;
}

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function app(env: Record<string, string>, skills: (root: string) => void): Promise<{ t: TestApp; root: string }> {
  const root = tempDir('ongrid-conc-skills-');
  skills(root);
  const t = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ...env });
  cleanups.push(async () => {
    await t.close();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(t.dataDir, { recursive: true, force: true });
  });
  return { t, root };
}

function post(t: TestApp, url: string, body?: unknown) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

/** Marker files a skill leaves, one per child run. */
function marks(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

describe('the running limit and the queue', () => {
  test('50 at once with 4 running and 10 queued: exactly 36 get 429 with Retry-After, 14 all succeed, 14 child runs', async () => {
    const { t, root } = await app(
      { ONGRID_MAX_CONCURRENT_EXECUTIONS: '4', ONGRID_MAX_QUEUED_EXECUTIONS: '10' },
      (r) => {
        // Long enough that all 50 are admitted or refused before the first run frees a slot.
        writeSkill(r, { name: 'sleeper', script: `mktemp marks/run.XXXXXX >/dev/null\nsleep 1\necho '{"slept": true}'` });
        fs.mkdirSync(path.join(r, 'sleeper', 'marks'));
      },
    );
    let peak = 0;
    const probe = setInterval(() => (peak = Math.max(peak, t.services.queue.running)), 5);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => post(t, '/v1/skills/sleeper/execute', { args: {} })),
    );
    clearInterval(probe);

    const refused = answers.filter((a) => a.statusCode === 429);
    const served = answers.filter((a) => a.statusCode === 200);
    assert.equal(refused.length, 36);
    assert.equal(served.length, 14);
    for (const a of refused) {
      assert.equal((a.json() as { error: { code: string } }).error.code, 'too_many_executions');
      assert.match(String(a.headers['retry-after']), /^[1-9]\d*$/);
    }
    const ids = new Set(served.map((a) => (a.json() as Execution).id));
    assert.equal(ids.size, 14);
    for (const a of served) assert.equal((a.json() as Execution).status, 'succeeded');
    assert.equal(marks(path.join(root, 'sleeper', 'marks')).length, 14, 'one child per admitted execution');
    assert.ok(peak <= 4, `never more than 4 running (saw ${peak})`);

    // None lost, none extra: the store holds exactly the 14, all succeeded.
    const list = (await t.app.inject({ method: 'GET', url: '/v1/executions?skill=sleeper' })).json() as {
      items: Execution[];
      total: number;
    };
    assert.equal(list.total, 14);
    assert.deepEqual(new Set(list.items.map((e) => e.id)), ids);
    assert.ok(list.items.every((e) => e.status === 'succeeded'));
  });
});

describe('cancel', () => {
  test('a queued one never runs; a running one has its process group killed; both end cancelled', async () => {
    const { t, root } = await app({ ONGRID_MAX_CONCURRENT_EXECUTIONS: '1', ONGRID_KILL_GRACE_MS: '300' }, (r) => {
      writeSkill(r, { name: 'blocker', script: `echo $$ > entry.pid\nsleep 600 &\necho $! > child.pid\nwait` });
      writeSkill(r, { name: 'waiter', script: `: > ran\necho '{}'` });
      writeSkill(r, { name: 'quick', script: `echo '{}'` });
    });
    const blocker = (await post(t, '/v1/skills/blocker/execute', { wait: false })).json() as Execution;
    const entry = await readPid(path.join(root, 'blocker', 'entry.pid'));
    cleanups.push(() => killGroup(entry));
    const child = await readPid(path.join(root, 'blocker', 'child.pid'));

    const waiting = await post(t, '/v1/skills/waiter/execute', { wait: false });
    assert.equal(waiting.statusCode, 202);
    const queued = waiting.json() as Execution;
    assert.equal(queued.status, 'queued');

    const c1 = await post(t, `/v1/executions/${queued.id}/cancel`);
    assert.equal(c1.statusCode, 200);
    assert.equal((c1.json() as Execution).status, 'cancelled');

    const c2 = await post(t, `/v1/executions/${blocker.id}/cancel`);
    assert.equal(c2.statusCode, 200);
    const cancelled = c2.json() as Execution;
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.error?.code, 'cancelled');
    await eventually(() => processGone(entry) && processGone(child), 5000, 'the blocker group to be gone');

    // The slot is free again and the queue moved on, yet the cancelled one never started.
    const after = await post(t, '/v1/skills/quick/execute', {});
    assert.equal((after.json() as Execution).status, 'succeeded');
    assert.ok(!fs.existsSync(path.join(root, 'waiter', 'ran')), 'the cancelled queued one never ran');
    const evs = ((await t.app.inject({ method: 'GET', url: `/v1/executions/${queued.id}/events` })).json() as { items: Event[] }).items;
    assert.deepEqual(
      evs.map((e) => e.type),
      ['created', 'queued', 'cancelled'],
    );
    const blockerEvents = ((await t.app.inject({ method: 'GET', url: `/v1/executions/${blocker.id}/events` })).json() as { items: Event[] }).items;
    assert.equal(blockerEvents.at(-1)?.type, 'cancelled');
    assert.ok(blockerEvents.some((e) => e.type === 'started'));
  });

  test('cancel of a finished one is 409 execution_finished; of an unknown id 404', async () => {
    const { t } = await app({}, (r) => writeSkill(r, { name: 'quick', script: `echo '{}'` }));
    const done = (await post(t, '/v1/skills/quick/execute', {})).json() as Execution;
    assert.equal(done.status, 'succeeded');
    const again = await post(t, `/v1/executions/${done.id}/cancel`);
    assert.equal(again.statusCode, 409);
    assert.equal((again.json() as { error: { code: string } }).error.code, 'execution_finished');
    const stored = (await t.app.inject({ method: 'GET', url: `/v1/executions/${done.id}` })).json() as Execution;
    assert.equal(stored.status, 'succeeded', 'a refused cancel changes nothing');
    const unknown = await post(t, '/v1/executions/00000000-0000-4000-8000-000000000000/cancel');
    assert.equal(unknown.statusCode, 404);
    assert.equal((unknown.json() as { error: { code: string } }).error.code, 'execution_not_found');
  });
});
