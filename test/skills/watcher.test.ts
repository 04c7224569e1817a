/**
 * Hot reload (CONTRACT section 3) at unit level: a real chokidar watcher over real files in a
 * temp folder, feeding a real SkillRegistry. Each test changes the disk the way an operator's
 * tool would and polls (with a deadline) until the registry and the log show the result.
 */
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import pino from 'pino';
import { loadAll } from '../../src/skills/loader.js';
import { SkillRegistry } from '../../src/skills/registry.js';
import type { ExternalSkill } from '../../src/skills/types.js';
import {
  comparePaths,
  isAtOrUnder,
  isEntryFailure,
  SettleQueue,
  watchSkills,
  type SkillWatcher,
} from '../../src/skills/watcher.js';

const DEADLINE_MS = 5000; // the contract says 1 s; this only proves "did not hang"

const temps: string[] = [];
after(() => {
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix = 'ongrid-watch-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}

/** Writes run.sh (unless `noEntry`) and skill.json into `dir`. */
function writePack(dir: string, name: string, fields: Record<string, unknown> = {}, opts: { noEntry?: boolean } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  if (!opts.noEntry) fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
  const manifest = path.join(dir, 'skill.json');
  fs.writeFileSync(manifest, JSON.stringify({ name, description: `skill ${name}`, entry: 'run.sh', ...fields }));
  return manifest;
}

async function eventually<T>(fn: () => T | Promise<T>, what: string, timeoutMs = DEADLINE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

interface Harness {
  root: string;
  registry: SkillRegistry;
  watcher: SkillWatcher;
  /** Every log message so far. */
  msgs: string[];
  /** The external skill registered under `name`, if any. */
  skill(name: string): ExternalSkill | undefined;
  names(): string[];
}

const open: SkillWatcher[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()));
});

/** Boot-loads `roots` (default: a fresh temp root prepared by `prepare`) and starts watching. */
async function start(opts: { prepare?: (root: string) => void; roots?: string[]; pollMs?: number } = {}): Promise<Harness> {
  const root = tempDir();
  opts.prepare?.(root);
  const msgs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) msgs.push((JSON.parse(line) as { msg: string }).msg);
      cb();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const roots = opts.roots ?? [root];
  const registry = new SkillRegistry();
  await loadAll(roots, registry, logger);
  const watcher = watchSkills({ roots, registry, logger, pollMs: opts.pollMs ?? 0 });
  open.push(watcher);
  await watcher.ready;
  return {
    root,
    registry,
    watcher,
    msgs,
    skill: (name) => {
      const s = registry.get(name);
      return s?.source === 'external' ? s : undefined;
    },
    names: () => registry.list().map((s) => s.name),
  };
}

const registered = (name: string, manifest: string) => `skill loader: registered subprocess skill "${name}" from ${manifest}`;
const reloaded = (name: string, manifest: string) => `skill loader: reloaded subprocess skill "${name}" from ${manifest}`;
const unregistered = (name: string, manifest: string) => `skill loader: unregistered subprocess skill "${name}" from ${manifest}`;
const isParseLine = (m: string) => m.startsWith('skill loader: parse ');

describe('pure rules', () => {
  test('isAtOrUnder is lexical and does not confuse siblings sharing a prefix', () => {
    assert.equal(isAtOrUnder('/r/a/skill.json', '/r/a'), true);
    assert.equal(isAtOrUnder('/r/a', '/r/a'), true);
    assert.equal(isAtOrUnder('/r/ab/skill.json', '/r/a'), false);
    assert.equal(isAtOrUnder('/r', '/r/a'), false);
  });

  test('only entry-related build failures are retried when other files change', () => {
    assert.equal(isEntryFailure('skill loader: build "x": entry /r/x/run.sh not found'), true);
    assert.equal(isEntryFailure('skill loader: build "a\\"b": entry /e escapes allowlist root /r'), true);
    assert.equal(isEntryFailure('skill loader: build "x": class "wild" invalid'), false);
    assert.equal(isEntryFailure('skill loader: parse /r/x/skill.json: Unexpected end of JSON input'), false);
  });

  test('comparePaths orders segment by segment, like the boot walk', () => {
    const sorted = ['/r/a-b/skill.json', '/r/a/skill.json', '/r/a/z/skill.json'].sort(comparePaths);
    assert.deepEqual(sorted, ['/r/a/skill.json', '/r/a/z/skill.json', '/r/a-b/skill.json']);
  });

  test('SettleQueue releases a path once quiet, and events inside a dirty folder keep it waiting', () => {
    const q = new SettleQueue(100, 400);
    q.touch('/r/pack', 'path', 0);
    q.touch('/r/pack/skill.json', 'path', 50);
    assert.deepEqual(q.takeDue(120), [], 'the folder saw activity at t=50, so it is not due at 120');
    assert.equal(q.nextDue(), 150);
    const due = q.takeDue(150).map((d) => d.path).sort();
    assert.deepEqual(due, ['/r/pack', '/r/pack/skill.json']);
    assert.equal(q.size, 0);
  });

  test('SettleQueue releases a path that never goes quiet after the maximum wait', () => {
    const q = new SettleQueue(100, 400);
    for (let t = 0; t <= 380; t += 20) q.touch('/r/busy', 'activity', t);
    assert.equal(q.nextDue(), 400);
    const [only] = q.takeDue(400);
    assert.equal(only?.path, '/r/busy');
    assert.equal(only?.dirty.activity, true);
    assert.equal(only?.dirty.path, false);
  });
});

describe('skill.json add, edit, invalid edit, delete', () => {
  test('a new pack is registered with the boot log line', async () => {
    const h = await start();
    const manifest = writePack(path.join(h.root, 'disk-cleaner'), 'disk_cleaner');
    await eventually(() => h.skill('disk_cleaner'), 'disk_cleaner registered');
    assert.equal(h.skill('disk_cleaner')?.manifestPath, manifest);
    assert.ok(h.msgs.includes(registered('disk_cleaner', manifest)));
  });

  test('an edit replaces the registration and logs "reloaded"', async () => {
    let manifest = '';
    const h = await start({ prepare: (root) => (manifest = writePack(path.join(root, 'p'), 'probe')) });
    const before = h.skill('probe');
    fs.writeFileSync(manifest, JSON.stringify({ name: 'probe', description: 'edited', entry: 'run.sh', timeout_seconds: 7 }));
    await eventually(() => h.skill('probe')?.description === 'edited', 'the edit to apply');
    assert.equal(h.skill('probe')?.timeoutSeconds, 7);
    assert.equal(before?.description, 'skill probe', 'the earlier snapshot is untouched (immutable)');
    assert.ok(h.msgs.includes(reloaded('probe', manifest)));
  });

  test('an edit that makes it invalid unregisters it and logs why, then a fix registers it again', async () => {
    let manifest = '';
    const h = await start({ prepare: (root) => (manifest = writePack(path.join(root, 'p'), 'probe')) });
    fs.writeFileSync(manifest, JSON.stringify({ name: 'probe', description: 'x', entry: 'run.sh', class: 'wild' }));
    await eventually(() => !h.skill('probe'), 'probe unregistered');
    const buildAt = h.msgs.indexOf('skill loader: build "probe": class "wild" invalid');
    const goneAt = h.msgs.indexOf(unregistered('probe', manifest));
    assert.ok(buildAt >= 0 && goneAt > buildAt, `build line then unregistered line, got ${JSON.stringify(h.msgs)}`);

    fs.writeFileSync(manifest, '{"name": "probe", "descr');
    await eventually(() => h.msgs.some(isParseLine), 'the parse error line');
    assert.ok(h.msgs.some((m) => m.startsWith(`skill loader: parse ${manifest}: `)));

    writePack(path.join(h.root, 'p'), 'probe');
    await eventually(() => h.skill('probe'), 'probe registered again');
    assert.equal(h.msgs.filter((m) => m === registered('probe', manifest)).length, 2, 'boot and after the fix');
  });

  test('a deleted skill.json is unregistered', async () => {
    let manifest = '';
    const h = await start({ prepare: (root) => (manifest = writePack(path.join(root, 'p'), 'probe')) });
    fs.unlinkSync(manifest);
    await eventually(() => !h.skill('probe'), 'probe unregistered');
    assert.ok(h.msgs.includes(unregistered('probe', manifest)));
  });

  test('removing a whole pack folder unregisters every skill in it', async () => {
    const h = await start({
      prepare: (root) => {
        writePack(path.join(root, 'pack', 'one'), 'one');
        writePack(path.join(root, 'pack', 'two'), 'two');
        writePack(path.join(root, 'other'), 'other');
      },
    });
    fs.rmSync(path.join(h.root, 'pack'), { recursive: true });
    await eventually(() => h.names().join() === 'other', 'only "other" left');
    assert.ok(h.msgs.includes(unregistered('one', path.join(h.root, 'pack', 'one', 'skill.json'))));
    assert.ok(h.msgs.includes(unregistered('two', path.join(h.root, 'pack', 'two', 'skill.json'))));
  });

  test('editing the entry script reloads nothing (the entry is resolved at run time)', async () => {
    let manifest = '';
    const h = await start({ prepare: (root) => (manifest = writePack(path.join(root, 'p'), 'probe')) });
    const snapshot = h.skill('probe');
    fs.writeFileSync(path.join(h.root, 'p', 'run.sh'), '#!/bin/sh\necho "{\\"v\\":2}"\n');
    // Then a manifest change as a marker: once it shows, the entry edit has been seen too.
    writePack(path.join(h.root, 'marker'), 'marker');
    await eventually(() => h.skill('marker'), 'the marker');
    assert.equal(h.skill('probe'), snapshot, 'same snapshot object');
    assert.ok(!h.msgs.includes(reloaded('probe', manifest)));
  });
});

describe('duplicates', () => {
  test('a skipped duplicate is promoted, and logged as registered, when the winner goes', async () => {
    const h = await start({
      prepare: (root) => {
        writePack(path.join(root, 'a'), 'twin', { description: 'first' });
        writePack(path.join(root, 'b'), 'twin', { description: 'second' });
      },
    });
    assert.equal(h.skill('twin')?.description, 'first');
    fs.rmSync(path.join(h.root, 'a'), { recursive: true });
    await eventually(() => h.skill('twin')?.description === 'second', 'the duplicate promoted');
    const goneAt = h.msgs.indexOf(unregistered('twin', path.join(h.root, 'a', 'skill.json')));
    const promotedAt = h.msgs.indexOf(registered('twin', path.join(h.root, 'b', 'skill.json')));
    assert.ok(goneAt >= 0 && promotedAt > goneAt, JSON.stringify(h.msgs));
  });

  test('a new pack with a taken name is skipped, with the boot line', async () => {
    const h = await start({ prepare: (root) => writePack(path.join(root, 'a'), 'twin') });
    const later = writePack(path.join(h.root, 'b'), 'twin');
    const line = `skill loader: skill "twin" already registered, skipping ${later}`;
    await eventually(() => h.msgs.includes(line), 'the skip line');
    assert.equal(h.skill('twin')?.manifestPath, path.join(h.root, 'a', 'skill.json'));
  });

  test('a winner renamed to another name frees its old name for the duplicate', async () => {
    let first = '';
    const h = await start({
      prepare: (root) => {
        first = writePack(path.join(root, 'a'), 'twin', { description: 'first' });
        writePack(path.join(root, 'b'), 'twin', { description: 'second' });
      },
    });
    writePack(path.join(h.root, 'a'), 'solo');
    await eventually(() => h.skill('solo') && h.skill('twin')?.description === 'second', 'rename and promotion');
    assert.ok(h.msgs.includes(registered('solo', first)));
    assert.ok(h.msgs.includes(registered('twin', path.join(h.root, 'b', 'skill.json'))));
  });
});

describe('deployment tools', () => {
  test('temp file + rename (config management) never logs a parse error', async () => {
    let manifest = '';
    const h = await start({ prepare: (root) => (manifest = writePack(path.join(root, 'p'), 'probe')) });
    for (let i = 1; i <= 5; i++) {
      const tmp = path.join(h.root, 'p', `.skill.json.${i}.tmp`);
      fs.writeFileSync(tmp, JSON.stringify({ name: 'probe', description: `v${i}`, entry: 'run.sh' }));
      fs.renameSync(tmp, manifest);
    }
    await eventually(() => h.skill('probe')?.description === 'v5', 'the last version');
    assert.deepEqual(h.msgs.filter(isParseLine), []);
    assert.ok(h.msgs.includes(reloaded('probe', manifest)));
  });

  test('a manifest written in two parts is read once, complete', async () => {
    const h = await start();
    const dir = path.join(h.root, 'slow');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const text = JSON.stringify({ name: 'slow_writer', description: 'written in two parts', entry: 'run.sh' });
    const fh = await fs.promises.open(path.join(dir, 'skill.json'), 'w');
    await fh.write(text.slice(0, 20));
    await delay(30); // a writer pausing mid-file, well inside the settle time
    await fh.write(text.slice(20));
    await fh.close();
    await eventually(() => h.skill('slow_writer'), 'slow_writer registered');
    assert.deepEqual(h.msgs.filter(isParseLine), []);
  });

  test('a pack copied with its manifest before its entry ends registered (cp order is not lexical)', async () => {
    const h = await start();
    const dir = path.join(h.root, 'late-entry');
    fs.mkdirSync(dir);
    const manifest = path.join(dir, 'skill.json');
    fs.writeFileSync(manifest, JSON.stringify({ name: 'late_entry', description: 'd', entry: 'bin/run.sh' }));
    // The entry arrives after the manifest was surely read and refused.
    await eventually(() => h.msgs.some((m) => m.startsWith('skill loader: build "late_entry": entry ')), 'the refusal');
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(path.join(dir, 'bin', 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await eventually(() => h.skill('late_entry'), 'late_entry registered once its entry exists');
    assert.ok(h.msgs.includes(registered('late_entry', manifest)));
  });

  test('a pack folder moved to a new name is unregistered under the old path and registered under the new', async () => {
    const h = await start({ prepare: (root) => writePack(path.join(root, 'v1'), 'mover') });
    fs.renameSync(path.join(h.root, 'v1'), path.join(h.root, 'v2'));
    const fresh = path.join(h.root, 'v2', 'skill.json');
    await eventually(() => h.skill('mover')?.manifestPath === fresh, 'mover under v2');
    assert.ok(h.msgs.includes(unregistered('mover', path.join(h.root, 'v1', 'skill.json'))));
    assert.ok(h.msgs.includes(registered('mover', fresh)));
    assert.ok(!h.msgs.some((m) => m.includes('already registered')), 'the move is not taken for a duplicate');
  });

  test('rsync (temp files, then renames, into a new tree) registers every pack', async () => {
    const src = tempDir('ongrid-rsync-src-');
    for (let i = 0; i < 5; i++) writePack(path.join(src, `pack${i}`), `synced_${i}`);
    const h = await start();
    const hasRsync = (() => {
      try {
        execFileSync('rsync', ['--version'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();
    // Without rsync, mimic it: temp name in the target folder, then rename.
    if (hasRsync) execFileSync('rsync', ['-a', `${src}/`, `${h.root}/`]);
    else {
      for (let i = 0; i < 5; i++) {
        const dir = path.join(h.root, `pack${i}`);
        fs.mkdirSync(dir);
        for (const f of ['run.sh', 'skill.json']) {
          fs.copyFileSync(path.join(src, `pack${i}`, f), path.join(dir, `.${f}.XyZ12`));
          fs.renameSync(path.join(dir, `.${f}.XyZ12`), path.join(dir, f));
        }
      }
    }
    await eventually(() => h.names().length === 5, 'five packs');
    assert.deepEqual(h.names(), ['synced_0', 'synced_1', 'synced_2', 'synced_3', 'synced_4']);
    assert.deepEqual(h.msgs.filter((m) => m.startsWith('skill loader: parse') || m.startsWith('skill loader: build')), []);
  });

  test('a container volume update (..data symlink swapped, as Kubernetes does) ends with the new contents', async () => {
    // Layout of a ConfigMap volume: ..<stamp>/<pack>, ..data -> ..<stamp>, <pack> -> ..data/<pack>.
    const release = (root: string, stamp: string, packs: Record<string, string>) => {
      for (const [dir, description] of Object.entries(packs)) writePack(path.join(root, stamp, dir), dir.replace('-', '_'), { description });
    };
    const h = await start({
      prepare: (root) => {
        release(root, '..2024_01', { 'vol-a': 'a1' });
        fs.symlinkSync('..2024_01', path.join(root, '..data'));
        fs.symlinkSync('..data/vol-a', path.join(root, 'vol-a'));
      },
    });
    assert.equal(h.skill('vol_a')?.description, 'a1');
    release(h.root, '..2024_02', { 'vol-a': 'a2', 'vol-b': 'b2' });
    fs.symlinkSync('..2024_02', path.join(h.root, '..data_tmp'));
    fs.renameSync(path.join(h.root, '..data_tmp'), path.join(h.root, '..data'));
    fs.symlinkSync('..data/vol-b', path.join(h.root, 'vol-b'));
    fs.rmSync(path.join(h.root, '..2024_01'), { recursive: true });
    await eventually(
      () => h.skill('vol_a')?.description === 'a2' && h.skill('vol_b')?.description === 'b2',
      'both packs at their new version',
    );
    // Every path that reaches vol_a now reads the new bytes.
    for (const m of h.registry.manifestPaths().filter((p) => p.includes('vol-a'))) {
      assert.equal(h.registry.getByManifest(m)?.description, 'a2', m);
    }
    assert.deepEqual(h.msgs.filter(isParseLine), []);
  });

  test('a root folder replaced by another renamed over it is re-read', async () => {
    const parent = tempDir('ongrid-swap-root-');
    const root = path.join(parent, 'skills');
    writePack(path.join(root, 'keep'), 'kept_pack', { description: 'old' });
    writePack(path.join(root, 'drop'), 'dropped_pack');
    const h = await start({ roots: [root] });
    const next = path.join(parent, 'skills.next');
    writePack(path.join(next, 'keep'), 'kept_pack', { description: 'new' });
    writePack(path.join(next, 'add'), 'added_pack');
    fs.renameSync(root, path.join(parent, 'skills.old'));
    fs.renameSync(next, root);
    await eventually(() => h.names().join() === 'added_pack,kept_pack' && h.skill('kept_pack')?.description === 'new', 'the new root');
    // And the new folder is the one watched now.
    writePack(path.join(root, 'later'), 'later_pack');
    await eventually(() => h.skill('later_pack'), 'a pack added after the swap');
  });

  test('a symlinked pack folder inside the root is followed, and edits through it are seen', async () => {
    const h = await start({ prepare: (root) => writePack(path.join(root, 'releases', 'v1'), 'linked', { description: 'v1' }) });
    // releases/v1 is already the winner; "current" is the deployment's stable path to it.
    fs.symlinkSync('releases/v1', path.join(h.root, 'current'));
    const viaLink = path.join(h.root, 'current', 'skill.json');
    await eventually(() => h.msgs.includes(`skill loader: skill "linked" already registered, skipping ${viaLink}`), 'the link walked');
    // A release switch: the old release goes, the link points at a new one.
    writePack(path.join(h.root, 'releases', 'v2'), 'linked', { description: 'v2' });
    const tmpLink = path.join(h.root, '.current.tmp');
    fs.symlinkSync('releases/v2', tmpLink);
    fs.renameSync(tmpLink, path.join(h.root, 'current'));
    fs.rmSync(path.join(h.root, 'releases', 'v1'), { recursive: true });
    await eventually(() => h.skill('linked') && h.registry.getByManifest(viaLink)?.description === 'v2', 'current -> v2');
    assert.equal(h.skill('linked')?.description, 'v2');
    assert.equal(h.registry.getByManifest(path.join(h.root, 'releases', 'v1', 'skill.json')), undefined);
  });
});

describe('roots', () => {
  test('a root that appears after start is picked up', async () => {
    const parent = tempDir('ongrid-late-root-');
    const lateRoot = path.join(parent, 'skills');
    const h = await start({ roots: [lateRoot] });
    assert.deepEqual(h.names(), []);
    const staging = path.join(parent, 'staging');
    writePack(path.join(staging, 'p'), 'late_root_skill');
    fs.renameSync(staging, lateRoot);
    await eventually(() => h.skill('late_root_skill'), 'the skill of the late root');
    assert.ok(h.msgs.includes(registered('late_root_skill', path.join(lateRoot, 'p', 'skill.json'))));
    // And it is watched from then on.
    writePack(path.join(lateRoot, 'q'), 'after_appearing');
    await eventually(() => h.skill('after_appearing'), 'a pack added to the late root');
  });

  test('a root that disappears unregisters its skills; the other roots are untouched', async () => {
    const keep = tempDir('ongrid-keep-root-');
    writePack(path.join(keep, 'k'), 'kept');
    const goneParent = tempDir('ongrid-gone-root-');
    const gone = path.join(goneParent, 'skills');
    writePack(path.join(gone, 'g'), 'goner');
    const h = await start({ roots: [keep, gone] });
    assert.deepEqual(h.names(), ['goner', 'kept']);
    fs.renameSync(gone, path.join(goneParent, 'moved-away'));
    await eventually(() => h.names().join() === 'kept', 'goner unregistered');
    assert.ok(h.msgs.includes(unregistered('goner', path.join(gone, 'g', 'skill.json'))));
  });
});

describe('polling mode (ONGRID_SKILLS_WATCH_POLL_MS)', () => {
  test('add, edit and delete are seen by polling', async () => {
    const h = await start({ pollMs: 100 });
    const manifest = writePack(path.join(h.root, 'p'), 'polled');
    await eventually(() => h.skill('polled'), 'polled registered');
    writePack(path.join(h.root, 'p'), 'polled', { description: 'edited' });
    await eventually(() => h.skill('polled')?.description === 'edited', 'polled reloaded');
    fs.rmSync(path.join(h.root, 'p'), { recursive: true });
    await eventually(() => !h.skill('polled'), 'polled unregistered');
    assert.ok(h.msgs.includes(reloaded('polled', manifest)));
    assert.ok(h.msgs.includes(unregistered('polled', manifest)));
  });
});

describe('close', () => {
  test('after close() the registry no longer follows the disk', async () => {
    const h = await start();
    await h.watcher.close();
    writePack(path.join(h.root, 'after'), 'after_close');
    // A second watcher proves the change was visible on disk; the closed one must not apply it.
    const witness = await start({ roots: [h.root] });
    writePack(path.join(h.root, 'after2'), 'after_close_2');
    await eventually(() => witness.skill('after_close_2'), 'the witness sees the change');
    assert.equal(h.skill('after_close'), undefined);
    assert.equal(h.skill('after_close_2'), undefined);
  });

  test('a process that closes its watcher exits on its own (no handle keeps it alive)', async () => {
    const root = tempDir();
    writePack(path.join(root, 'p'), 'probe');
    const missing = path.join(root, 'not-yet'); // a polled-for root too
    const script = path.join(tempDir('ongrid-watch-child-'), 'child.mts');
    const src = path.resolve(import.meta.dirname, '../../src');
    fs.writeFileSync(
      script,
      `import { SkillRegistry } from ${JSON.stringify(path.join(src, 'skills/registry.ts'))};
import { loadAll } from ${JSON.stringify(path.join(src, 'skills/loader.ts'))};
import { watchSkills } from ${JSON.stringify(path.join(src, 'skills/watcher.ts'))};
const noop = () => {};
const logger = { info: noop, warn: noop, debug: noop };
const registry = new SkillRegistry();
const roots = ${JSON.stringify([root, missing])};
await loadAll(roots, registry, logger);
const w = watchSkills({ roots, registry, logger, pollMs: Number(process.argv[2]) });
await w.ready;
await w.close();
console.log('closed', registry.list().length);
`,
    );
    for (const pollMs of ['0', '50']) {
      const child = spawn(process.execPath, ['--import', 'tsx', script, pollMs], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      clearTimeout(killer);
      assert.equal(code, 0, `pollMs=${pollMs}: the child must exit by itself; output: ${out}`);
      assert.match(out, /closed 1/);
    }
  });
});
