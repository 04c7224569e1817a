/**
 * Hot reload end to end (CONTRACT section 3): the real app with ONGRID_SKILLS_WATCH=true over
 * real folders; every case is observed the way an operator would, through GET /v1/skills and
 * the log lines, polling until the expected state with a deadline.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

const DEADLINE_MS = 5000; // the contract says 1 s; this only proves "did not hang"

interface SkillJson {
  name: string;
  description: string;
  manifest_path: string;
  entry: string;
  timeout_seconds: number;
}
interface Execution {
  id: string;
  status: string;
  result: unknown;
  error: { code: string } | null;
}

const temps: string[] = [];
const apps: TestApp[] = [];
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

function mkTemp(prefix: string): string {
  const d = tempDir(prefix);
  temps.push(d);
  return d;
}

async function boot(env: Record<string, string>): Promise<TestApp> {
  const app = await startApp({ ONGRID_SKILLS_WATCH: 'true', ...env, ONGRID_DATA_DIR: mkTemp('ongrid-hot-data-') });
  apps.push(app);
  return app;
}

async function listExternal(app: TestApp): Promise<SkillJson[]> {
  const res = await app.app.inject({ method: 'GET', url: '/v1/skills?source=external' });
  assert.equal(res.statusCode, 200);
  return (res.json() as { items: SkillJson[] }).items;
}

async function getSkill(app: TestApp, name: string): Promise<SkillJson | undefined> {
  const res = await app.app.inject({ method: 'GET', url: `/v1/skills/${name}` });
  return res.statusCode === 200 ? (res.json() as SkillJson) : undefined;
}

async function execute(app: TestApp, name: string, wait: boolean): Promise<{ status: number; body: Execution }> {
  const res = await app.app.inject({
    method: 'POST',
    url: `/v1/skills/${name}/execute`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ args: {}, wait }),
  });
  return { status: res.statusCode, body: res.json() as Execution };
}

async function execution(app: TestApp, id: string): Promise<Execution> {
  return (await app.app.inject({ method: 'GET', url: `/v1/executions/${id}` })).json() as Execution;
}

const until = <T>(fn: () => T | Promise<T>, what: string, ms = DEADLINE_MS) => eventually(fn, ms, what);
const manifestOf = (dir: string) => path.join(dir, 'skill.json');
const registered = (name: string, m: string) => `skill loader: registered subprocess skill "${name}" from ${m}`;
const reloaded = (name: string, m: string) => `skill loader: reloaded subprocess skill "${name}" from ${m}`;
const unregistered = (name: string, m: string) => `skill loader: unregistered subprocess skill "${name}" from ${m}`;

describe('hot reload over HTTP', () => {
  let app: TestApp;
  let root: string;
  let dupRoot: string;

  before(async () => {
    root = mkTemp('ongrid-hot-root-');
    dupRoot = mkTemp('ongrid-hot-dup-');
    writeSkill(root, { name: 'resident', script: 'echo "{}"' });
    app = await boot({ ONGRID_SKILLS_EXTERNAL_DIRS: `${root}:${dupRoot}` });
  });

  test('add, edit, invalid edit and delete of a skill.json, each with its log line', async () => {
    const dir = writeSkill(root, { name: 'lifecycle', script: 'echo "{}"' });
    const m = manifestOf(dir);
    await until(() => getSkill(app, 'lifecycle'), 'lifecycle listed');
    assert.ok(app.logs.messages().includes(registered('lifecycle', m)));

    writeSkill(root, { name: 'lifecycle', script: 'echo "{}"', manifest: { description: 'second version' } });
    await until(async () => (await getSkill(app, 'lifecycle'))?.description === 'second version', 'the edit listed');
    assert.ok(app.logs.messages().includes(reloaded('lifecycle', m)));

    fs.writeFileSync(m, JSON.stringify({ name: 'lifecycle', description: 'no entry field' }));
    await until(async () => (await getSkill(app, 'lifecycle')) === undefined, 'lifecycle gone after the invalid edit');
    const msgs = app.logs.messages();
    const why = msgs.findIndex((x) => x.startsWith('skill loader: build "lifecycle": ') && x.includes('entry'));
    assert.ok(why >= 0 && msgs.indexOf(unregistered('lifecycle', m)) > why, 'the reason, then the unregistered line');

    writeSkill(root, { name: 'lifecycle', script: 'echo "{}"' });
    await until(() => getSkill(app, 'lifecycle'), 'lifecycle back');
    fs.rmSync(m);
    await until(async () => (await getSkill(app, 'lifecycle')) === undefined, 'lifecycle gone after the delete');
    assert.equal(app.logs.messages().filter((x) => x === unregistered('lifecycle', m)).length, 2);
    assert.ok((await getSkill(app, 'resident')) !== undefined, 'the other skills are untouched');
  });

  test('a skipped duplicate in a later root is promoted when the winner goes', async () => {
    const winner = writeSkill(root, { name: 'twin', script: 'echo "{}"', manifest: { description: 'winner' } });
    await until(() => getSkill(app, 'twin'), 'twin listed');
    const spare = writeSkill(dupRoot, { name: 'twin', script: 'echo "{}"', manifest: { description: 'spare' } });
    await until(
      () => app.logs.messages().includes(`skill loader: skill "twin" already registered, skipping ${manifestOf(spare)}`),
      'the skip line',
    );
    fs.rmSync(winner, { recursive: true });
    const promoted = await until(async () => {
      const s = await getSkill(app, 'twin');
      return s?.description === 'spare' ? s : undefined;
    }, 'the spare promoted');
    assert.equal(promoted?.manifest_path, manifestOf(spare));
    assert.ok(app.logs.messages().includes(registered('twin', manifestOf(spare))));
  });

  test('a pack folder renamed is unregistered under the old path and registered under the new', async () => {
    const old = writeSkill(root, { name: 'renamed', script: 'echo "{}"', dir: 'renamed-v1' });
    await until(() => getSkill(app, 'renamed'), 'renamed listed');
    const fresh = path.join(root, 'renamed-v2');
    fs.renameSync(old, fresh);
    await until(async () => (await getSkill(app, 'renamed'))?.manifest_path === manifestOf(fresh), 'renamed at its new path');
    const msgs = app.logs.messages();
    assert.ok(msgs.includes(unregistered('renamed', manifestOf(old))));
    assert.ok(msgs.includes(registered('renamed', manifestOf(fresh))));
  });

  test('a symlinked pack folder inside the root is walked through the link, and leaves with its target', async () => {
    // The release lives under the root (entries must stay inside it); "live" is a link to it.
    const release = writeSkill(root, { name: 'linked_pack', script: 'echo "{}"', dir: 'releases/r1' });
    await until(() => getSkill(app, 'linked_pack'), 'linked_pack listed');
    fs.symlinkSync(path.relative(root, release), path.join(root, 'live'));
    const viaLink = manifestOf(path.join(root, 'live'));
    // Same manifest reached twice: the release registered first, so the link's copy is the spare.
    await until(() => app.logs.messages().includes(`skill loader: skill "linked_pack" already registered, skipping ${viaLink}`), 'the link walked');
    fs.rmSync(release, { recursive: true });
    // The link now dangles: both paths are gone from the catalog.
    await until(async () => (await getSkill(app, 'linked_pack')) === undefined, 'linked_pack gone with its target');
  });

  test('500 packs copied in at once are all registered', async (t) => {
    const staging = mkTemp('ongrid-hot-bulk-');
    for (let i = 0; i < 500; i++) {
      const dir = path.join(staging, `pack-${String(i).padStart(3, '0')}`);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
      fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify({ name: `bulk_${i}`, description: 'bulk', entry: 'run.sh' }));
    }
    const before = (await listExternal(app)).length;
    execFileSync('cp', ['-r', staging, path.join(root, 'bulk')]);
    const copied = Date.now();
    await until(async () => (await listExternal(app)).length === before + 500, '500 more skills', 30_000);
    const names = new Set((await listExternal(app)).map((s) => s.name));
    for (let i = 0; i < 500; i++) assert.ok(names.has(`bulk_${i}`), `bulk_${i}`);
    t.diagnostic(`500 packs listed ${Date.now() - copied} ms after cp returned`);
    const bulkLines = app.logs.messages().filter((x) => x.includes(`${path.join(root, 'bulk')}${path.sep}`));
    assert.equal(bulkLines.length, 500, 'one line per pack: no spurious errors, reloads or skips while the copy was in flight');
    assert.ok(bulkLines.every((x) => x.startsWith('skill loader: registered subprocess skill "bulk_')));
  });

  test('a manifest changed while an execution runs: the run keeps the old definition, the next uses the new', async () => {
    const dir = path.join(root, 'switcher');
    fs.mkdirSync(dir);
    // v1: the old entry waits for a go-file (no fixed sleep in the test), then answers "old".
    fs.writeFileSync(path.join(dir, 'old.sh'), '#!/bin/sh\nwhile [ ! -f go ]; do sleep 0.05; done\necho \'{"v":"old"}\'\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'new.sh'), '#!/bin/sh\necho new-entry >&2\nsleep 30\n', { mode: 0o755 });
    const m = manifestOf(dir);
    const write = (entry: string, timeout: number) =>
      fs.writeFileSync(m, JSON.stringify({ name: 'switcher', description: 'd', entry, timeout_seconds: timeout, env_allow: ['PATH'] }));
    write('old.sh', 30);
    await until(() => getSkill(app, 'switcher'), 'switcher listed');

    const first = await execute(app, 'switcher', false);
    assert.equal(first.status, 202);
    await until(async () => (await execution(app, first.body.id)).status === 'running', 'the first run started');

    // v2: another entry, and a 1 s timeout.
    write('new.sh', 1);
    await until(async () => (await getSkill(app, 'switcher'))?.timeout_seconds === 1, 'v2 listed');
    const second = await execute(app, 'switcher', true);
    assert.equal(second.body.status, 'timed_out', 'the next run has the new 1 s timeout');
    const events = (await app.app.inject({ method: 'GET', url: `/v1/executions/${second.body.id}/events` })).json() as {
      items: Array<{ type: string; line?: string }>;
    };
    assert.ok(events.items.some((e) => e.type === 'stderr' && e.line === 'new-entry'), 'the next run used the new entry');

    // More than a second has passed since v2: the first run still has its 30 s timeout.
    assert.equal((await execution(app, first.body.id)).status, 'running');
    fs.writeFileSync(path.join(dir, 'go'), '');
    const done = await until(async () => {
      const e = await execution(app, first.body.id);
      return e.status === 'running' || e.status === 'queued' ? undefined : e;
    }, 'the first run to finish', 15_000);
    assert.equal(done?.status, 'succeeded');
    assert.deepEqual(done?.result, { v: 'old' });
  });

  test('a root that appears after boot is picked up, and one that disappears unregisters its skills', async () => {
    const parent = mkTemp('ongrid-hot-late-');
    const late = path.join(parent, 'skills');
    const lateApp = await boot({ ONGRID_SKILLS_EXTERNAL_DIRS: late });
    assert.deepEqual(await listExternal(lateApp), []);
    assert.ok(lateApp.logs.messages().includes(`skill loader: dir ${late} not present, skipping`));

    writeSkill(late, { name: 'late_comer', script: 'echo "{}"' });
    await until(() => getSkill(lateApp, 'late_comer'), 'late_comer listed');
    assert.ok(lateApp.logs.messages().includes(registered('late_comer', manifestOf(path.join(late, 'late_comer')))));

    fs.renameSync(late, path.join(parent, 'retired'));
    await until(async () => (await listExternal(lateApp)).length === 0, 'the vanished root emptied');
    assert.ok(lateApp.logs.messages().includes(unregistered('late_comer', manifestOf(path.join(late, 'late_comer')))));
  });
});

describe('watch settings', () => {
  test('ONGRID_SKILLS_WATCH_POLL_MS switches to polling, which still follows the disk', async () => {
    const root = mkTemp('ongrid-hot-poll-');
    const app = await boot({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_SKILLS_WATCH_POLL_MS: '100' });
    assert.ok(app.logs.messages().some((x) => x.startsWith('skill watcher: ') && x.includes('polling every 100 ms')));
    const dir = writeSkill(root, { name: 'polled', script: 'echo "{}"' });
    await until(() => getSkill(app, 'polled'), 'polled listed');
    fs.rmSync(dir, { recursive: true });
    await until(async () => (await getSkill(app, 'polled')) === undefined, 'polled gone');
  });

  test('ONGRID_SKILLS_WATCH=false starts no watcher', async () => {
    const root = mkTemp('ongrid-hot-off-');
    writeSkill(root, { name: 'static_one', script: 'echo "{}"' });
    const app = await boot({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_SKILLS_WATCH: 'false' });
    assert.ok(await getSkill(app, 'static_one'));
    assert.ok(!app.logs.messages().some((x) => x.startsWith('skill watcher: ')));
  });
});
