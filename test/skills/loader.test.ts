import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import {
  loadAll,
  loaderErrorCount,
  loadManifestFile,
  logUnregistered,
  logUpsert,
  parseRoots,
  resolveRoots,
} from '../../src/skills/loader.js';
import { SkillRegistry } from '../../src/skills/registry.js';
import type { ExternalSkill } from '../../src/skills/types.js';

// --- helpers ---------------------------------------------------------------------------------

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-loader-')));
after(() => fs.rmSync(base, { recursive: true, force: true }));

type LogLine = { level: number; msg: string } & Record<string, unknown>;
const INFO = 30;
const WARN = 40;

/** A pino logger at debug level whose lines are collected as parsed JSON. */
function capture() {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { logger, lines };
}

/** A fresh folder for one test, holding `root/` (the allow-list root) and `outside/`. */
function scene() {
  const dir = fs.mkdtempSync(path.join(base, 'case-'));
  const root = path.join(dir, 'root');
  const outside = path.join(dir, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  return { dir, root, outside };
}

function writeFile(p: string, content: string | Buffer, mode = 0o644): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content, { mode });
  return p;
}

const SCRIPT = '#!/bin/sh\necho "{}"\n';

/** Writes `<dir>/skill.json` (an object is JSON-encoded, a string written as is) and `<dir>/run.sh`. */
function pack(dir: string, manifest: unknown, withEntry = true): string {
  if (withEntry) writeFile(path.join(dir, 'run.sh'), SCRIPT, 0o755);
  return writeFile(path.join(dir, 'skill.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
}

async function load(roots: string[]) {
  const { logger, lines } = capture();
  const registry = new SkillRegistry();
  const result = await loadAll(roots, registry, logger);
  const msgs = lines.map((l) => l.msg);
  return { registry, lines, msgs, result };
}

const summary = (n: number) => `skill loader: ${n} subprocess skills registered`;
const registeredLine = (name: string, p: string) => `skill loader: registered subprocess skill "${name}" from ${p}`;
const skippingLine = (name: string, p: string) => `skill loader: skill "${name}" already registered, skipping ${p}`;
const build = (name: string, reason: string) => `skill loader: build ${JSON.stringify(name)}: ${reason}`;
const jsonError = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected invalid JSON');
};

const minimal = { name: 'disk_cleaner', description: 'Frees disk space', entry: 'run.sh' };
const NAME_RULE = '(must match ^[a-z0-9_]+$)';

// --- one manifest per case: exact line + registry state ------------------------------------

interface Ctx {
  root: string;
  outside: string;
  packDir: string;
  manifestPath: string;
}

interface Case {
  title: string;
  manifest: unknown;
  /** Extra files the case needs, created before loading. */
  setup?: (c: Omit<Ctx, 'manifestPath'>) => void;
  /** Whether the manifest's own run.sh is written (default true). */
  withEntry?: boolean;
  /** The exact msg of the manifest's one log line (a pattern where ajv words it). */
  line: (c: Ctx) => string | RegExp;
  /** Present when the skill must be registered; checks the snapshot. */
  check?: (s: ExternalSkill, c: Ctx) => void;
}

const cases: Case[] = [
  {
    title: 'a valid full manifest is registered with every field',
    manifest: {
      name: 'disk_cleaner',
      description: 'Frees disk space',
      schema: {
        type: 'object',
        properties: { path: { type: 'string' }, dry_run: { type: 'boolean', default: true } },
        required: ['path'],
      },
      entry: 'run.sh',
      env_allow: ['HOME', 'LANG'],
      timeout_seconds: 120,
      class: 'mutating',
      category: 'maintenance',
      homepage: 'ignored: unknown fields are allowed',
    },
    line: (c) => registeredLine('disk_cleaner', c.manifestPath),
    check: (s, c) => {
      assert.deepEqual(
        [s.source, s.name, s.description, s.class, s.category, s.timeoutSeconds, [...s.envAllow], s.available],
        ['external', 'disk_cleaner', 'Frees disk space', 'mutating', 'maintenance', 120, ['HOME', 'LANG'], true],
      );
      assert.deepEqual([s.manifestPath, s.dir, s.entry, s.root, s.rootReal], [
        c.manifestPath,
        c.packDir,
        path.join(c.packDir, 'run.sh'),
        c.root,
        c.root,
      ]);
      assert.equal(s.manifestSha256, createHash('sha256').update(fs.readFileSync(c.manifestPath)).digest('hex'));
      assert.ok(Object.isFrozen(s) && Object.isFrozen(s.schema));
      // disk_cleaner's dry_run default is applied by the compiled validator.
      const args: Record<string, unknown> = { path: '/var/tmp' };
      assert.equal(s.validate(args), true);
      assert.deepEqual(args, { path: '/var/tmp', dry_run: true });
      assert.equal(s.validate({ dry_run: 'no' }), false);
      assert.equal(s.validate.errors?.length, 2, 'all errors are reported');
    },
  },
  {
    title: 'a minimal manifest gets the defaults',
    manifest: minimal,
    line: (c) => registeredLine('disk_cleaner', c.manifestPath),
    check: (s) => {
      assert.deepEqual([s.class, s.category, s.timeoutSeconds, [...s.envAllow]], ['safe', 'external', 30, []]);
      assert.deepEqual(s.schema, { type: 'object', properties: {} });
    },
  },
  { title: 'missing name', manifest: { ...minimal, name: undefined }, line: () => build('', 'missing field "name"') },
  { title: 'empty name', manifest: { ...minimal, name: '' }, line: () => build('', `name "" invalid ${NAME_RULE}`) },
  { title: 'name not a string', manifest: { ...minimal, name: 42 }, line: () => build('', 'name must be a string, got number') },
  ...['Bad_Name', 'bad-name', 'bad name', 'naïve', 'café_日本'].map(
    (name): Case => ({
      title: `name ${JSON.stringify(name)} is invalid and quoted as written`,
      manifest: { ...minimal, name },
      line: () => build(name, `name ${JSON.stringify(name)} invalid ${NAME_RULE}`),
    }),
  ),
  {
    title: 'missing description',
    manifest: { ...minimal, description: undefined },
    line: () => build('disk_cleaner', 'missing field "description"'),
  },
  {
    title: 'empty description',
    manifest: { ...minimal, description: '' },
    line: () => build('disk_cleaner', 'description must be a non-empty string'),
  },
  { title: 'missing entry', manifest: { ...minimal, entry: undefined }, line: () => build('disk_cleaner', 'missing field "entry"') },
  {
    title: 'a schema that does not compile',
    manifest: { ...minimal, schema: { type: 'object', properties: { path: { type: 'strin' } } } },
    line: () => /^skill loader: build "disk_cleaner": schema invalid: schema is invalid: .*properties\/path\/type/,
  },
  {
    title: 'a schema that is not an object schema',
    manifest: { ...minimal, schema: { type: 'array', items: {} } },
    line: () => build('disk_cleaner', 'schema must describe type "object"'),
  },
  ...(['wild', '', 1, null, 'SAFE', true] as unknown[]).map(
    (klass): Case => ({
      title: `class ${JSON.stringify(klass)} is invalid`,
      manifest: { ...minimal, name: 'bad_class', class: klass },
      line: () => build('bad_class', `class ${JSON.stringify(klass)} invalid`),
    }),
  ),
  ...(['safe', 'mutating', 'dangerous'] as const).map(
    (klass): Case => ({
      title: `class ${klass} is accepted`,
      manifest: { ...minimal, class: klass },
      line: (c) => registeredLine('disk_cleaner', c.manifestPath),
      check: (s) => assert.equal(s.class, klass),
    }),
  ),
  ...([[undefined, 30], [0, 30], [-3, 30], [5, 5]] as const).map(
    ([given, expected]): Case => ({
      title: `timeout_seconds ${String(given)} gives ${expected} s`,
      manifest: { ...minimal, timeout_seconds: given },
      line: (c) => registeredLine('disk_cleaner', c.manifestPath),
      check: (s) => assert.equal(s.timeoutSeconds, expected),
    }),
  ),
  {
    title: 'a fractional timeout_seconds is a build error',
    manifest: { ...minimal, timeout_seconds: 1.5 },
    line: () => build('disk_cleaner', 'timeout_seconds must be an integer, got 1.5'),
  },
  {
    title: 'a string timeout_seconds is a build error',
    manifest: { ...minimal, timeout_seconds: '10' },
    line: () => build('disk_cleaner', 'timeout_seconds must be an integer, got "10"'),
  },
  {
    title: 'a non-array env_allow is a build error',
    manifest: { ...minimal, env_allow: 'HOME' },
    line: () => build('disk_cleaner', 'env_allow must be an array of strings'),
  },
  {
    title: 'a relative entry in a subfolder resolves against the manifest folder',
    manifest: { ...minimal, entry: 'bin/clean.sh' },
    withEntry: false,
    setup: (c) => void writeFile(path.join(c.packDir, 'bin', 'clean.sh'), SCRIPT, 0o755),
    line: (c) => registeredLine('disk_cleaner', c.manifestPath),
    check: (s, c) => assert.equal(s.entry, path.join(c.packDir, 'bin', 'clean.sh')),
  },
  {
    title: 'an absolute entry inside the root is allowed',
    manifest: { ...minimal, entry: '@ROOT@/shared/tool.sh' },
    setup: (c) => void writeFile(path.join(c.root, 'shared', 'tool.sh'), SCRIPT, 0o755),
    line: (c) => registeredLine('disk_cleaner', c.manifestPath),
    check: (s, c) => assert.equal(s.entry, path.join(c.root, 'shared', 'tool.sh')),
  },
  {
    title: 'an absolute entry outside the root escapes',
    manifest: { ...minimal, name: 'bad_path', entry: '@OUTSIDE@/escape.sh' },
    setup: (c) => void writeFile(path.join(c.outside, 'escape.sh'), SCRIPT, 0o755),
    line: (c) => build('bad_path', `entry ${path.join(c.outside, 'escape.sh')} escapes allowlist root ${c.root}`),
  },
  {
    title: 'a `..` entry climbing out of the root escapes',
    manifest: { ...minimal, name: 'bad_path', entry: '../../outside/escape.sh' },
    setup: (c) => void writeFile(path.join(c.outside, 'escape.sh'), SCRIPT, 0o755),
    line: (c) => build('bad_path', `entry ${path.join(c.outside, 'escape.sh')} escapes allowlist root ${c.root}`),
  },
  {
    title: 'a symlinked entry pointing outside escapes, printing the real target',
    manifest: { ...minimal, name: 'bad_path', entry: 'link.sh' },
    setup: (c) => {
      writeFile(path.join(c.outside, 'escape.sh'), SCRIPT, 0o755);
      fs.symlinkSync(path.join(c.outside, 'escape.sh'), path.join(c.packDir, 'link.sh'));
    },
    line: (c) => build('bad_path', `entry ${path.join(c.outside, 'escape.sh')} escapes allowlist root ${c.root}`),
  },
  {
    title: 'an entry that does not exist is a build error',
    manifest: { ...minimal, entry: 'missing.sh' },
    line: (c) => build('disk_cleaner', `entry ${path.join(c.packDir, 'missing.sh')} not found`),
  },
  ...['{"name": "x",}', '{"name": ', '', 'not json', '{"a":1}}'].map(
    (text): Case => ({
      title: `JSON syntax error ${JSON.stringify(text)} logs the parser's message`,
      manifest: text,
      line: (c) => `skill loader: parse ${c.manifestPath}: ${jsonError(text)}`,
    }),
  ),
  ...([['[]', 'array'], ['null', 'null'], ['42', 'number'], ['"skill"', 'string']] as const).map(
    ([text, type]): Case => ({
      title: `a top level ${type} is a build error`,
      manifest: text,
      line: () => build('', `manifest must be a JSON object, got ${type}`),
    }),
  ),
  {
    title: 'a 2020-12 schema is compiled with 2020-12 rules',
    manifest: {
      ...minimal,
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' } },
        dependentRequired: { a: ['b'] },
      },
    },
    line: (c) => registeredLine('disk_cleaner', c.manifestPath),
    check: (s) => {
      assert.equal(s.validate({ a: 'x', b: 'y' }), true);
      assert.equal(s.validate({ a: 'x' }), false, 'dependentRequired is enforced');
    },
  },
];

describe('loader: one manifest, one exact log line', () => {
  for (const c of cases) {
    test(c.title, async () => {
      const { root, outside } = scene();
      const packDir = path.join(root, 'pack');
      const manifest =
        typeof c.manifest === 'string'
          ? c.manifest
          : JSON.parse(JSON.stringify(c.manifest).replaceAll('@ROOT@', root).replaceAll('@OUTSIDE@', outside));
      fs.mkdirSync(packDir);
      c.setup?.({ root, outside, packDir });
      const manifestPath = pack(packDir, manifest, c.withEntry ?? true);
      const ctx = { root, outside, packDir, manifestPath };

      const { registry, lines, msgs, result } = await load([root]);
      const registered = c.check ? 1 : 0;
      assert.equal(msgs.length, 2, `one line for the manifest plus the summary: ${JSON.stringify(msgs)}`);
      const expected = c.line(ctx);
      if (expected instanceof RegExp) assert.match(msgs[0] ?? '', expected);
      else assert.equal(msgs[0], expected);
      assert.equal(msgs[1], summary(registered));
      assert.equal(lines[0]?.manifest, manifestPath);
      assert.equal(lines[0]?.level, registered ? INFO : WARN);
      assert.deepEqual(result, { registered, errors: 1 - registered });
      assert.equal(registry.size, registered);
      if (msgs[0]?.startsWith('skill loader: build ')) {
        assert.equal(typeof lines[0]?.skill, 'string', 'build lines carry the skill name as a field');
      }
      if (c.check) {
        const skill = registry.list()[0] as ExternalSkill;
        assert.equal(lines[0]?.skill, skill.name);
        c.check(skill, ctx);
      }
    });
  }
});

// --- the walk --------------------------------------------------------------------------------

describe('loader: walking the roots', () => {
  test('nested packs load in per-folder code point order, depth first', async () => {
    const { root } = scene();
    const dirs = ['a', 'a/b', 'a-b', 'B', '\u{1F600}', '\uE000'];
    dirs.forEach((d, i) => pack(path.join(root, d), { ...minimal, name: `s${i}` }));
    const { msgs } = await load([root]);
    const order = ['B', 'a/b', 'a', 'a-b', '\uE000', '\u{1F600}'];
    assert.deepEqual(msgs, [
      ...order.map((d) => registeredLine(`s${dirs.indexOf(d)}`, path.join(root, d, 'skill.json'))),
      summary(6),
    ]);
  });

  test('only files named exactly skill.json are manifests', async () => {
    const { root } = scene();
    pack(path.join(root, 'p'), minimal);
    writeFile(path.join(root, 'q', 'Skill.json'), JSON.stringify({ ...minimal, name: 'upper' }));
    writeFile(path.join(root, 'q', 'skill.json.bak'), JSON.stringify({ ...minimal, name: 'backup' }));
    fs.mkdirSync(path.join(root, 'r', 'skill.json'), { recursive: true }); // a folder, not a file
    const { msgs } = await load([root]);
    assert.deepEqual(msgs, [registeredLine('disk_cleaner', path.join(root, 'p', 'skill.json')), summary(1)]);
  });

  test('a symlinked pack folder inside the root loads under the path it was found at', async () => {
    const { root } = scene();
    const real = path.join(root, 'zz-store', 'v1');
    pack(real, minimal);
    fs.symlinkSync(real, path.join(root, 'active'));
    const { registry, msgs } = await load([root]);
    const viaLink = path.join(root, 'active', 'skill.json');
    assert.deepEqual(msgs, [
      registeredLine('disk_cleaner', viaLink),
      skippingLine('disk_cleaner', path.join(real, 'skill.json')),
      summary(1),
    ]);
    assert.equal((registry.get('disk_cleaner') as ExternalSkill).entry, path.join(root, 'active', 'run.sh'));
  });

  test('a symlinked pack folder pointing outside is rejected by entry containment', async () => {
    const { root, outside } = scene();
    pack(path.join(outside, 'pack'), { ...minimal, name: 'bad_path' });
    fs.symlinkSync(path.join(outside, 'pack'), path.join(root, 'linked'));
    const { registry, msgs } = await load([root]);
    assert.deepEqual(msgs, [
      build('bad_path', `entry ${path.join(outside, 'pack', 'run.sh')} escapes allowlist root ${root}`),
      summary(0),
    ]);
    assert.equal(registry.size, 0);
  });

  test('a root that is a symlink works; containment uses its real path', async () => {
    const { dir, root, outside } = scene();
    pack(path.join(root, 'good'), minimal);
    pack(path.join(root, 'bad'), { ...minimal, name: 'bad_path', entry: path.join(outside, 'escape.sh') });
    writeFile(path.join(outside, 'escape.sh'), SCRIPT, 0o755);
    const link = path.join(dir, 'root-link');
    fs.symlinkSync(root, link);
    const { registry, msgs } = await load([link]);
    assert.deepEqual(msgs, [
      build('bad_path', `entry ${path.join(outside, 'escape.sh')} escapes allowlist root ${root}`),
      registeredLine('disk_cleaner', path.join(link, 'good', 'skill.json')),
      summary(1),
    ]);
    const s = registry.get('disk_cleaner') as ExternalSkill;
    assert.deepEqual([s.root, s.rootReal], [link, root]);
  });

  test('symlink loops do not hang the walk and each manifest is seen once per path', async () => {
    const { root } = scene();
    pack(path.join(root, 'p'), minimal);
    fs.symlinkSync(root, path.join(root, 'p', 'loop-to-root'));
    fs.symlinkSync(path.join(root, 'p'), path.join(root, 'p', 'loop-to-self'));
    fs.symlinkSync(path.join(root, 'p', 'nowhere'), path.join(root, 'p', 'dangling'));
    const { msgs } = await load([root]);
    assert.deepEqual(msgs, [registeredLine('disk_cleaner', path.join(root, 'p', 'skill.json')), summary(1)]);
  });

  test('folders deeper than the depth cap are not walked', async () => {
    const { root } = scene();
    pack(path.join(root, ...Array<string>(32).fill('d')), { ...minimal, name: 'deep_ok' });
    pack(path.join(root, ...Array<string>(33).fill('d')), { ...minimal, name: 'too_deep' });
    const { registry, msgs } = await load([root]);
    assert.deepEqual(registry.list().map((s) => s.name), ['deep_ok']);
    assert.match(msgs.find((m) => m.includes('deeper')) ?? '', /is deeper than 32 levels, not walked$/);
  });

  test('several roots with the same name: the first root wins and the other is skipped', async () => {
    const a = scene().root;
    const b = scene().root;
    pack(path.join(a, 'zz'), { ...minimal, description: 'from a' });
    pack(path.join(b, 'aa'), { ...minimal, description: 'from b' });
    const { registry, msgs } = await load([a, b]);
    assert.deepEqual(msgs, [
      registeredLine('disk_cleaner', path.join(a, 'zz', 'skill.json')),
      skippingLine('disk_cleaner', path.join(b, 'aa', 'skill.json')),
      summary(1),
    ]);
    assert.equal(registry.get('disk_cleaner')?.description, 'from a');
    // The skipped duplicate is kept and promoted when the winner goes.
    const { removed, promoted } = registry.removeByManifest(path.join(a, 'zz', 'skill.json'));
    assert.deepEqual([removed?.description, promoted?.description], ['from a', 'from b']);
    assert.equal(registry.get('disk_cleaner')?.description, 'from b');

    const reversed = await load([b, a]);
    assert.equal(reversed.registry.get('disk_cleaner')?.description, 'from b');
  });

  test('one broken manifest never blocks the others, and every manifest gets exactly one line', async () => {
    const { root } = scene();
    pack(path.join(root, 'a'), { ...minimal, name: 'alpha' });
    pack(path.join(root, 'b'), '{ oops');
    pack(path.join(root, 'c'), { ...minimal, name: 'gamma', class: 'wild' });
    pack(path.join(root, 'd'), { ...minimal, name: 'alpha' });
    pack(path.join(root, 'e'), { ...minimal, name: 'epsilon' });
    const before = loaderErrorCount();
    const { registry, lines, result } = await load([root]);
    const perManifest = lines.filter((l) => typeof l.manifest === 'string').map((l) => l.manifest);
    assert.deepEqual(perManifest, ['a', 'b', 'c', 'd', 'e'].map((d) => path.join(root, d, 'skill.json')));
    assert.deepEqual(registry.list().map((s) => s.name), ['alpha', 'epsilon']);
    assert.deepEqual(result, { registered: 2, errors: 2 });
    assert.equal(loaderErrorCount() - before, 2);
  });
});

// --- roots -----------------------------------------------------------------------------------

describe('loader: roots', () => {
  test('parseRoots splits on ":" and ",", trims and drops empty entries', () => {
    assert.deepEqual(parseRoots(' /a:/b , /c,,: ,/d '), ['/a', '/b', '/c', '/d']);
    assert.deepEqual(parseRoots(''), []);
  });

  test('a relative root, a missing root and a file root are skipped with their lines; good roots still load', async () => {
    const { dir, root } = scene();
    pack(path.join(root, 'p'), minimal);
    const missing = path.join(dir, 'does', 'not', 'exist');
    const file = writeFile(path.join(dir, 'a-file'), 'x');
    const { lines, msgs } = await load(parseRoots(`relative/path,${missing}:${file},${root}`));
    assert.deepEqual(msgs, [
      'skill loader: skip non-absolute dir "relative/path"',
      `skill loader: dir ${missing} not present, skipping`,
      `skill loader: dir ${file} not present, skipping`,
      registeredLine('disk_cleaner', path.join(root, 'p', 'skill.json')),
      summary(1),
    ]);
    assert.equal(lines[2]?.reason, 'not a directory');
  });

  test('no roots at all boots normally with a zero summary', async () => {
    const { msgs, result } = await load(parseRoots(''));
    assert.deepEqual(msgs, [summary(0)]);
    assert.deepEqual(result, { registered: 0, errors: 0 });
  });

  test('resolveRoots keeps configured order and reports real paths', async () => {
    const { dir, root } = scene();
    const link = path.join(dir, 'link');
    fs.symlinkSync(root, link);
    const { logger, lines } = capture();
    assert.deepEqual(await resolveRoots([link, root + '/'], logger), [
      { root: link, rootReal: root },
      { root, rootReal: root },
    ]);
    assert.equal(lines.length, 0);
  });
});

// --- size limit and reuse by the watcher ----------------------------------------------------

describe('loader: manifest size limit', () => {
  test('a 5 MB manifest is refused with its size', async () => {
    const { root } = scene();
    const big = JSON.stringify({ ...minimal, padding: 'x'.repeat(5 * 1024 * 1024) });
    const p = pack(path.join(root, 'big'), big);
    const { msgs, registry } = await load([root]);
    assert.deepEqual(msgs, [
      `skill loader: parse ${p}: manifest is ${Buffer.byteLength(big)} bytes, over the 1048576-byte limit`,
      summary(0),
    ]);
    assert.equal(registry.size, 0);
  });

  test('a manifest of exactly 1 MiB is accepted', async () => {
    const { root } = scene();
    const text = JSON.stringify(minimal);
    const p = pack(path.join(root, 'edge'), text + ' '.repeat(1024 * 1024 - text.length));
    assert.equal(fs.statSync(p).size, 1024 * 1024);
    const { msgs } = await load([root]);
    assert.deepEqual(msgs, [registeredLine('disk_cleaner', p), summary(1)]);
  });
});

describe('loader: per-file API for the watcher', () => {
  test('loadManifestFile returns the skill or the exact message the boot walk would log', async () => {
    const { root } = scene();
    const good = pack(path.join(root, 'good'), minimal);
    const bad = pack(path.join(root, 'bad'), { ...minimal, name: 'Bad' });
    const info = { root, rootReal: root };
    const ok = await loadManifestFile(good, info);
    assert.ok(ok.ok);
    assert.equal(ok.skill.manifestPath, good);
    assert.deepEqual(await loadManifestFile(bad, info), {
      ok: false,
      msg: build('Bad', `name "Bad" invalid ${NAME_RULE}`),
      skill: 'Bad',
    });
    const gone = path.join(root, 'gone', 'skill.json');
    assert.deepEqual(await loadManifestFile(gone, info), { ok: false, msg: `skill loader: parse ${gone}: cannot read file (ENOENT)` });
  });

  test('logUpsert and logUnregistered print the contract lines', async () => {
    const { root } = scene();
    const p = pack(path.join(root, 'x'), minimal);
    const loaded = await loadManifestFile(p, { root, rootReal: root });
    assert.ok(loaded.ok);
    const { logger, lines } = capture();
    logUpsert(logger, loaded.skill, 'registered');
    logUpsert(logger, loaded.skill, 'reloaded');
    logUpsert(logger, loaded.skill, 'skipped_duplicate');
    logUnregistered(logger, loaded.skill);
    assert.deepEqual(lines.map((l) => l.msg), [
      registeredLine('disk_cleaner', p),
      `skill loader: reloaded subprocess skill "disk_cleaner" from ${p}`,
      skippingLine('disk_cleaner', p),
      `skill loader: unregistered subprocess skill "disk_cleaner" from ${p}`,
    ]);
    assert.ok(lines.every((l) => l.skill === 'disk_cleaner' && l.manifest === p));
  });
});
