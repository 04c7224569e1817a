/**
 * Persona hot reload: a persona file added, changed or removed (or a persona folder appearing
 * or vanishing) applies to the next lookup, through a real chokidar watcher on real files.
 */
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import pino from 'pino';
import { PersonaRegistry } from '../../src/policy/persona-registry.js';
import { watchPersonas } from '../../src/policy/persona-watcher.js';
import { startApp, type TestApp } from '../helpers/app.js';

const DEADLINE_MS = 5000; // only proves "did not hang"

const temps: string[] = [];
after(() => {
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix = 'ongrid-persona-watch-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}

function persona(dir: string, name: string, mode: string, extra = ''): string {
  const file = path.join(dir, `${name}.md`);
  fs.writeFileSync(file, `---\nname: ${name}\ndescription: ${name} persona\npermission_mode: ${mode}\n${extra}---\nbody\n`);
  return file;
}

async function eventually<T>(fn: () => T | Promise<T>, what: string): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function watched(dirs: string[], pollMs = 0): Promise<{ personas: PersonaRegistry; msgs: string[] }> {
  const msgs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) msgs.push((JSON.parse(line) as { msg: string }).msg);
      cb();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const personas = new PersonaRegistry(dirs, logger);
  personas.reload();
  const w = watchPersonas(dirs, personas, logger, pollMs);
  closers.push(() => w.close());
  await w.ready;
  return { personas, msgs };
}

describe('persona files', () => {
  test('a changed persona applies to the next lookup', async () => {
    const dir = tempDir();
    const file = persona(dir, 'operator', 'read-only');
    const { personas } = await watched([dir]);
    assert.equal(personas.get('operator')?.permission_mode, 'read-only');
    const before = personas.get('operator');
    persona(dir, 'operator', 'dual-sign-required', 'tools: [probe_*]\n');
    await eventually(() => personas.get('operator')?.permission_mode === 'dual-sign-required', 'the new mode');
    assert.deepEqual(personas.get('operator')?.tools, ['probe_*']);
    assert.equal(before?.permission_mode, 'read-only', 'a request holding the old persona keeps it');
    assert.equal(personas.get('operator')?.source, file);
  });

  test('an added persona appears and a removed one disappears', async () => {
    const dir = tempDir();
    const { personas } = await watched([dir]);
    assert.equal(personas.get('newcomer'), undefined);
    const file = persona(dir, 'newcomer', 'mutating-with-confirm');
    await eventually(() => personas.get('newcomer'), 'newcomer');
    fs.unlinkSync(file);
    await eventually(() => personas.get('newcomer') === undefined, 'newcomer gone');
    assert.ok(personas.get('default'), 'the built-in default persona stays');
  });

  test('a save through a temp file and a rename is applied, the temp file is not a persona', async () => {
    const dir = tempDir();
    persona(dir, 'editor', 'read-only');
    const { personas, msgs } = await watched([dir]);
    const tmp = path.join(dir, '.editor.md.swp');
    fs.writeFileSync(tmp, '---\nname: editor\ndescription: saved\npermission_mode: mutating-with-confirm\n---\n');
    fs.renameSync(tmp, path.join(dir, 'editor.md'));
    await eventually(() => personas.get('editor')?.permission_mode === 'mutating-with-confirm', 'the saved version');
    assert.equal(personas.get('editor')?.description, 'saved');
    assert.ok(msgs.includes('persona loader: reloaded persona files'));
  });

  test('a persona folder that appears after start is picked up, and one that vanishes takes its personas', async () => {
    const parent = tempDir();
    const dir = path.join(parent, 'personas');
    const { personas } = await watched([dir]);
    const staging = path.join(parent, 'staging');
    fs.mkdirSync(staging);
    persona(staging, 'late', 'read-only');
    fs.renameSync(staging, dir);
    await eventually(() => personas.get('late'), 'late persona');
    // Watched from then on.
    persona(dir, 'later', 'read-only');
    await eventually(() => personas.get('later'), 'a persona added to the late folder');
    fs.rmSync(dir, { recursive: true });
    await eventually(() => personas.get('late') === undefined && personas.get('later') === undefined, 'both gone');
  });

  test('a persona folder replaced by another renamed over it is re-read and watched', async () => {
    const parent = tempDir();
    const dir = path.join(parent, 'personas');
    fs.mkdirSync(dir);
    persona(dir, 'old_one', 'read-only');
    const { personas } = await watched([dir]);
    const next = path.join(parent, 'personas.next');
    fs.mkdirSync(next);
    persona(next, 'new_one', 'read-only');
    fs.renameSync(dir, path.join(parent, 'personas.old'));
    fs.renameSync(next, dir);
    await eventually(() => personas.get('new_one') && personas.get('old_one') === undefined, 'the new folder');
    persona(dir, 'new_one', 'dual-sign-required');
    await eventually(() => personas.get('new_one')?.permission_mode === 'dual-sign-required', 'an edit in the new folder');
  });

  test('polling mode sees changes too', async () => {
    const dir = tempDir();
    persona(dir, 'polled', 'read-only');
    const { personas } = await watched([dir], 100);
    persona(dir, 'polled', 'mutating-with-confirm');
    await eventually(() => personas.get('polled')?.permission_mode === 'mutating-with-confirm', 'the polled change');
  });

  test('a process that closes its persona watcher exits on its own', async () => {
    const dir = tempDir();
    persona(dir, 'p', 'read-only');
    const src = path.resolve(import.meta.dirname, '../../src');
    const script = path.join(tempDir('ongrid-persona-child-'), 'child.mts');
    fs.writeFileSync(
      script,
      `import { PersonaRegistry } from ${JSON.stringify(path.join(src, 'policy/persona-registry.ts'))};
import { watchPersonas } from ${JSON.stringify(path.join(src, 'policy/persona-watcher.ts'))};
const noop = () => {};
const logger = { info: noop, warn: noop, debug: noop, error: noop };
const dirs = ${JSON.stringify([dir, path.join(dir, 'missing')])};
const personas = new PersonaRegistry(dirs, logger as never);
personas.reload();
const w = watchPersonas(dirs, personas, logger as never, 0);
await w.ready;
await w.close();
console.log('closed');
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(killer);
    assert.equal(code, 0, `the child must exit by itself; output: ${out}`);
    assert.match(out, /closed/);
  });
});

describe('over HTTP', () => {
  let app: TestApp | undefined;
  after(async () => app?.close());

  test('GET /v1/personas/{name} answers the changed persona on the next request', async () => {
    const dir = tempDir();
    persona(dir, 'approver', 'read-only');
    app = await startApp({ ONGRID_PERSONAS_DIRS: dir, ONGRID_SKILLS_WATCH: 'true', ONGRID_DATA_DIR: tempDir('ongrid-persona-data-') });
    const get = async () => {
      const res = await app!.app.inject({ method: 'GET', url: '/v1/personas/approver' });
      return { status: res.statusCode, body: res.json() as { permission_mode?: string } };
    };
    assert.equal((await get()).body.permission_mode, 'read-only');
    persona(dir, 'approver', 'dual-sign-required');
    await eventually(async () => (await get()).body.permission_mode === 'dual-sign-required', 'the new mode over HTTP');
    fs.unlinkSync(path.join(dir, 'approver.md'));
    await eventually(async () => (await get()).status === 404, 'approver gone (404)');
  });
});
