/**
 * Idempotency-Key on POST /v1/skills/{name}/execute (CONTRACT section 5 item 8 and section 12):
 * one child per (subject, skill, key), replays answer the same execution, other args conflict.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

interface Execution {
  id: string;
  status: string;
  result: unknown;
  requested_by: string;
}

const root = tempDir('ongrid-idem-skills-');
const marksDir = path.join(root, 'once', 'marks');
let t: TestApp;

before(async () => {
  writeSkill(root, {
    name: 'once',
    script: `mktemp marks/run.XXXXXX >/dev/null\nsleep 0.3\nexec cat`,
    manifest: { schema: { type: 'object', properties: { n: { type: 'integer' } } } },
  });
  writeSkill(root, { name: 'other', script: `mktemp ../once/marks/other.XXXXXX >/dev/null\nexec cat` });
  fs.mkdirSync(marksDir);
  t = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root });
});

after(async () => {
  await t.close();
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(t.dataDir, { recursive: true, force: true });
});

async function execute(skill: string, body: unknown, headers: Record<string, string>) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/v1/skills/${skill}/execute`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, body: res.json() as Execution & { error: { code: string } } };
}

function runs(): number {
  return fs.readdirSync(marksDir).length;
}

describe('Idempotency-Key', () => {
  test('the same key sent twice at once runs the child once; both answers share the id and the result', async () => {
    const before = runs();
    const h = { 'idempotency-key': 'deploy-42', 'x-ongrid-subject': 'alice' };
    const [a, b] = await Promise.all([execute('once', { args: { n: 1 } }, h), execute('once', { args: { n: 1 } }, h)]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(a.body.id, b.body.id);
    assert.equal(a.body.status, 'succeeded');
    assert.equal(b.body.status, 'succeeded', 'the replay waited for the end too');
    assert.deepEqual(b.body.result, { n: 1 });
    assert.equal(runs() - before, 1);

    // A replay later returns the same execution without running anything.
    const later = await execute('once', { args: { n: 1 } }, h);
    assert.equal(later.status, 200);
    assert.equal(later.body.id, a.body.id);
    // wait:false on an ended one answers as a fresh request would for its state: 200 ended.
    const noWait = await execute('once', { args: { n: 1 }, wait: false }, h);
    assert.equal(noWait.status, 200);
    assert.equal(noWait.body.id, a.body.id);
    assert.equal(runs() - before, 1);

    const list = (await t.app.inject({ method: 'GET', url: '/v1/executions?skill=once' })).json() as { total: number };
    assert.equal(list.total, 1, 'one execution recorded');
  });

  test('the same key with other args is 409 idempotency_conflict and runs nothing', async () => {
    const h = { 'idempotency-key': 'conflict-1', 'x-ongrid-subject': 'alice' };
    const first = await execute('once', { args: { n: 1 } }, h);
    assert.equal(first.status, 200);
    const before = runs();
    const other = await execute('once', { args: { n: 2 } }, h);
    assert.equal(other.status, 409);
    assert.equal(other.body.error.code, 'idempotency_conflict');
    assert.equal(runs(), before);
  });

  test('the key is scoped to subject and skill: other subjects and skills do not collide', async () => {
    const key = { 'idempotency-key': 'shared-key' };
    const before = runs();
    const alice = await execute('once', { args: { n: 1 } }, { ...key, 'x-ongrid-subject': 'alice' });
    const bob = await execute('once', { args: { n: 1 } }, { ...key, 'x-ongrid-subject': 'bob' });
    const otherSkill = await execute('other', { args: {} }, { ...key, 'x-ongrid-subject': 'alice' });
    assert.equal(alice.body.status, 'succeeded');
    assert.equal(bob.body.status, 'succeeded');
    assert.equal(otherSkill.body.status, 'succeeded');
    assert.notEqual(alice.body.id, bob.body.id);
    assert.notEqual(alice.body.id, otherSkill.body.id);
    assert.equal(alice.body.requested_by, 'alice');
    assert.equal(bob.body.requested_by, 'bob');
    assert.equal(runs() - before, 3);
  });

  test('a key of 200 characters is accepted; 201 characters is 400 invalid_request', async () => {
    const ok = await execute('once', { args: {} }, { 'idempotency-key': 'k'.repeat(200) });
    assert.equal(ok.status, 200);
    const before = runs();
    const tooLong = await execute('once', { args: {} }, { 'idempotency-key': 'k'.repeat(201) });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.error.code, 'invalid_request');
    assert.equal(runs(), before);
  });
});
