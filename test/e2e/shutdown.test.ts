import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, tempDir, writeSkill } from '../helpers/app.js';
import { spawnService, stopService } from '../helpers/http.js';

test('SIGTERM lets a running execution finish and be recorded, refuses new ones with 503, exits 0', async () => {
  const root = tempDir('ongrid-shutdown-');
  const gate = path.join(root, 'release');
  // Runs until the test creates the `release` file, so SIGTERM surely lands mid-run.
  writeSkill(root, {
    name: 'slow',
    script: `while [ ! -e ${gate} ]; do /bin/sleep 0.05; done\necho '{"done": true}'`,
    manifest: { env_allow: [], timeout_seconds: 30 },
  });
  const dataDir = tempDir('ongrid-shutdown-data-');
  const env = { ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_DATA_DIR: dataDir };
  const svc = await spawnService(env);
  try {
    const started = await fetch(`${svc.url}/v1/skills/slow/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wait: false }),
    });
    assert.equal(started.status, 202);
    const { id } = (await started.json()) as { id: string };
    await eventually(async () => ((await (await fetch(`${svc.url}/v1/executions/${id}`)).json()) as { status: string }).status === 'running');

    svc.child.kill('SIGTERM');
    // The signal is handled asynchronously: wait until the service says it is draining.
    await eventually(() => svc.logs.some((l) => String(l.msg).startsWith('shutting down')), 5000, 'the shutdown log line');
    // While draining: new executions are refused, reads still work.
    const refused = await eventually(async () => {
      const r = await fetch(`${svc.url}/v1/skills/slow/execute`, { method: 'POST', body: '{"wait": false}' });
      return r.status === 503 ? r : undefined;
    }, 5000, 'a 503 during shutdown');
    assert.ok(refused);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'shutting_down');
    const read = await fetch(`${svc.url}/v1/executions/${id}`);
    assert.equal(read.status, 200);
    assert.equal(svc.child.exitCode, null, 'still running while an execution runs');

    fs.writeFileSync(gate, '');
    const exit = await svc.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
  } finally {
    await stopService(svc);
  }

  // The finished run was recorded before exit.
  const again = await spawnService(env);
  try {
    const list = (await (await fetch(`${again.url}/v1/executions?skill=slow`)).json()) as { items: Array<{ status: string; result: unknown }> };
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0]!.status, 'succeeded');
    assert.deepEqual(list.items[0]!.result, { done: true });
  } finally {
    await stopService(again);
  }
});

test('a bearer token never appears in the logs, even on failed auth', async () => {
  const root = tempDir('ongrid-secret-');
  writeSkill(root, { name: 'echo', script: 'cat', manifest: { env_allow: [] } });
  const token = `tok-${crypto.randomBytes(16).toString('hex')}`;
  const tokensFile = path.join(root, '..', `tokens-${crypto.randomBytes(4).toString('hex')}.json`);
  fs.writeFileSync(tokensFile, JSON.stringify([{ subject: 'alice', token_sha256: crypto.createHash('sha256').update(token).digest('hex') }]));
  const svc = await spawnService({
    ONGRID_SKILLS_EXTERNAL_DIRS: root,
    ONGRID_DATA_DIR: tempDir(),
    ONGRID_API_TOKENS_FILE: tokensFile,
    ONGRID_LOG_LEVEL: 'trace',
  });
  try {
    const ok = await fetch(`${svc.url}/v1/skills/echo/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ args: { password: 'hunter2-secret-arg' } }),
    });
    assert.equal(ok.status, 200);
    assert.equal(((await ok.json()) as { requested_by: string }).requested_by, 'alice');
    const bad = await fetch(`${svc.url}/v1/skills`, { headers: { authorization: `Bearer ${token}x` } });
    assert.equal(bad.status, 401);
  } finally {
    await stopService(svc);
  }
  const logs = JSON.stringify(svc.logs) + svc.stderr();
  assert.ok(svc.logs.length > 5, 'the service logged something');
  assert.ok(!logs.includes(token), 'the token is not in the logs');
  assert.ok(!logs.includes('hunter2-secret-arg'), 'skill args are not in the logs');
});
