/**
 * Persistence across a crash (CONTRACT section 6): the real service process is killed with
 * SIGKILL mid-run and started again on the same data dir.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, tempDir, writeSkill } from '../helpers/app.js';
import { killGroup, readPid, spawnService, stopService, type ServiceProcess } from '../helpers/http.js';

interface Execution {
  id: string;
  status: string;
  error: { code: string } | null;
  finished_at: string | null;
  args: Record<string, unknown>;
  requested_by: string;
}
interface Event {
  seq: number;
  type: string;
  line?: string;
}

const root = tempDir('ongrid-restart-skills-');
const dataDir = tempDir('ongrid-restart-data-');
const personasDir = tempDir('ongrid-restart-personas-');
const services: ServiceProcess[] = [];
let orphan: number | undefined;

after(async () => {
  for (const s of services) await stopService(s);
  // The killed service could not clean up its child: it is this test's to remove.
  if (orphan !== undefined) killGroup(orphan);
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(personasDir, { recursive: true, force: true });
});

async function json<T>(url: string): Promise<T> {
  return (await (await fetch(url)).json()) as T;
}

test('after a SIGKILL mid-run and a restart: running and queued ones are interrupted with their events intact, pending ones stay pending', async () => {
  writeSkill(root, {
    name: 'long_haul',
    script: `echo $$ > entry.pid\necho 'step 1' >&2\necho 'step 2' >&2\nsleep 600\necho '{}'`,
  });
  writeSkill(root, { name: 'next_in_line', script: `: > ran\necho '{}'` });
  writeSkill(root, { name: 'needs_ok', script: `echo '{}'`, manifest: { class: 'mutating' } });
  fs.writeFileSync(
    path.join(personasDir, 'operator.md'),
    '---\nname: operator\ndescription: confirms mutations\npermission_mode: mutating-with-confirm\ntools: []\n---\n',
  );
  const env = {
    ONGRID_SKILLS_EXTERNAL_DIRS: root,
    ONGRID_DATA_DIR: dataDir,
    ONGRID_PERSONAS_DIRS: personasDir,
    ONGRID_MAX_CONCURRENT_EXECUTIONS: '1',
  };

  const first = await spawnService(env);
  services.push(first);
  const res = await fetch(`${first.url}/v1/skills/long_haul/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ongrid-subject': 'carol' },
    body: JSON.stringify({ wait: false, args: { reason: 'audit me' } }),
  });
  assert.equal(res.status, 202);
  const { id } = (await res.json()) as Execution;
  orphan = await readPid(path.join(root, 'long_haul', 'entry.pid'));
  await eventually(
    async () => (await json<{ items: Event[] }>(`${first.url}/v1/executions/${id}/events`)).items.filter((e) => e.type === 'stderr').length === 2,
    10_000,
    'both stderr lines to be stored',
  );

  const post = async (skill: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`${first.url}/v1/skills/${skill}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ wait: false }),
    });
    return (await r.json()) as Execution;
  };
  const queued = await post('next_in_line');
  assert.equal(queued.status, 'queued');
  const pending = await post('needs_ok', { 'x-ongrid-persona': 'operator' });
  assert.equal(pending.status, 'pending_approval');

  first.child.kill('SIGKILL');
  assert.equal((await first.exited).signal, 'SIGKILL');

  const second = await spawnService(env);
  services.push(second);
  const rec = await json<Execution>(`${second.url}/v1/executions/${id}`);
  assert.equal(rec.status, 'interrupted');
  assert.equal(rec.error?.code, 'interrupted');
  assert.ok(rec.finished_at, 'an interrupted execution has ended');
  assert.deepEqual(rec.args, { reason: 'audit me' });
  assert.equal(rec.requested_by, 'carol');

  const { items } = await json<{ items: Event[] }>(`${second.url}/v1/executions/${id}/events`);
  assert.deepEqual(
    items.map((e) => e.line ?? e.type),
    ['created', 'queued', 'started', 'step 1', 'step 2', 'interrupted'],
  );
  assert.deepEqual(
    items.map((e) => e.seq),
    items.map((_, i) => i + 1),
  );

  const list = await json<{ items: Execution[]; total: number }>(`${second.url}/v1/executions?status=interrupted`);
  assert.deepEqual(
    list.items.map((e) => e.id),
    [queued.id, id],
  );
  const queuedEvents = await json<{ items: Event[] }>(`${second.url}/v1/executions/${queued.id}/events`);
  assert.deepEqual(
    queuedEvents.items.map((e) => e.type),
    ['created', 'queued', 'interrupted'],
  );
  assert.ok(!fs.existsSync(path.join(root, 'next_in_line', 'ran')), 'a queued one is not run after the restart');
  assert.equal((await json<Execution>(`${second.url}/v1/executions/${pending.id}`)).status, 'pending_approval');
  assert.ok(
    second.logs.some((l) => typeof l.msg === 'string' && /interrupted/.test(l.msg)),
    'the restart says it interrupted leftovers',
  );
});
