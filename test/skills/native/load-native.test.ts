import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { LogCapture, tempDir } from '../../helpers/app.js';
import { loadConfig } from '../../../src/config.js';
import { SkillRegistry } from '../../../src/skills/registry.js';
import { loadNativeSkills } from '../../../src/skills/native/load-native.js';
import type { NativeSkill } from '../../../src/skills/types.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function writeSpec(root: string, folder: string, text: string): string {
  fs.mkdirSync(path.join(root, folder), { recursive: true });
  const p = path.join(root, folder, 'SKILL.md');
  fs.writeFileSync(p, text);
  return p;
}

async function load(root: string, env: NodeJS.ProcessEnv = {}) {
  const registry = new SkillRegistry();
  const logs = new LogCapture();
  const n = await loadNativeSkills(root, registry, pino({ level: 'debug' }, logs), env);
  return { registry, logs, n, native: (name: string) => registry.get(name) as NativeSkill | undefined };
}

const tool = (name: string, impl = 'builtin:system.SystemInfo', cls = 'read') =>
  `  - name: ${name}\n    impl: ${impl}\n    class: ${cls}\n    description: tool ${name}\n`;

const ctx = () => ({ signal: new AbortController().signal, log: () => {} });

describe('loading native skills', () => {
  const root = tempDir('ongrid-native-');
  dirs.push(root);
  const goodPath = writeSpec(root, 'a-good', `---\nname: good\ndescription: d\nmetadata:\n  ongrid:\n    category: ops\ntools:\n${tool('good_one')}${tool('good_two', 'builtin:system.SystemInfo', 'destructive')}    timeout_seconds: 7\n    schema:\n      type: object\n      properties:\n        n: { type: integer, default: 3 }\n---\n`);
  const brokenPath = writeSpec(root, 'b-broken', '---\nname: [oops\n---\n');
  const mixedPath = writeSpec(root, 'c-mixed', `---\nname: mixed\ndescription: d\ntools:\n${tool('unknown_impl', 'builtin:nope.Missing')}${tool('bad_class', 'builtin:system.SystemInfo', 'wild')}${tool('bad_schema')}    schema: { type: object, properties: { x: { type: 12 } } }\n${tool('fine_one')}---\n`);
  const needsPath = writeSpec(root, 'd-needs', `---\nname: needs\ndescription: d\nmetadata:\n  os: [no-such-os]\n  requires:\n    bins: [no_such_binary_xyz]\n    config: [ONGRID_TEST_NEEDED]\ntools:\n${tool('needy')}---\n`);
  writeSpec(root, 'e-dup', `---\nname: dup\ndescription: d\ntools:\n${tool('good_one')}---\n`);
  fs.writeFileSync(path.join(root, 'stray.md'), 'not in a folder');

  test('every valid tool is registered as a native skill with the contract log line', async () => {
    const { n, native, logs } = await load(root);
    assert.equal(n, 4); // good_one, good_two, fine_one, needy
    const s = native('good_one');
    assert.equal(s?.source, 'native');
    assert.equal(s?.specPath, goodPath);
    assert.equal(s?.category, 'ops');
    assert.equal(s?.class, 'safe');
    assert.equal(s?.timeoutSeconds, 30);
    assert.equal(s?.available, true);
    assert.equal(s?.unavailableReason, undefined);
    assert.ok(logs.messages().includes(`skill loader: registered native skill "good_one" from ${goodPath}`));
    assert.ok(logs.messages().includes('skill loader: 4 native skills registered'));
  });

  test('class, timeout and schema come from the tool; the schema validates with defaults', async () => {
    const s = (await load(root)).native('good_two');
    assert.equal(s?.class, 'dangerous');
    assert.equal(s?.timeoutSeconds, 7);
    const args: Record<string, unknown> = {};
    assert.equal(s?.validate(args), true);
    assert.deepEqual(args, { n: 3 });
    assert.equal(s?.validate({ n: 'x' }), false);
  });

  test('a tool without metadata.ongrid.category is in category "native"', async () => {
    assert.equal((await load(root)).native('fine_one')?.category, 'native');
  });

  test('a broken SKILL.md is one warn line and blocks nothing', async () => {
    const { logs, native } = await load(root);
    const warn = logs.lines.find((l) => l.msg.startsWith(`skill loader: parse ${brokenPath}:`));
    assert.ok(warn, 'parse warning logged');
    assert.equal(warn.level, 40);
    assert.match(warn.msg, /invalid YAML/);
    assert.ok(native('fine_one'), 'later files still load');
  });

  test('an unknown impl, bad class or bad schema skips that tool only, with a warn line naming it', async () => {
    const { logs, registry } = await load(root);
    for (const name of ['unknown_impl', 'bad_class', 'bad_schema']) assert.equal(registry.get(name), undefined, name);
    const msgs = logs.lines.filter((l) => l.level === 40).map((l) => l.msg);
    assert.ok(msgs.includes(`skill loader: build native skill "unknown_impl" from ${mixedPath}: unknown impl "builtin:nope.Missing"`));
    assert.ok(msgs.some((m) => m.startsWith(`skill loader: build native skill "bad_class" from ${mixedPath}: class "wild" invalid`)));
    assert.ok(msgs.some((m) => m.startsWith(`skill loader: build native skill "bad_schema" from ${mixedPath}: schema invalid`)));
  });

  test('unmet os, bins and config register the skill as unavailable with every reason', async () => {
    const s = (await load(root)).native('needy');
    assert.equal(s?.specPath, needsPath);
    assert.equal(s?.available, false);
    assert.match(s?.unavailableReason ?? '', /requires os no-such-os/);
    assert.match(s?.unavailableReason ?? '', /"no_such_binary_xyz" on PATH/);
    assert.match(s?.unavailableReason ?? '', /ONGRID_TEST_NEEDED/);
  });

  test('config requirements are checked against the environment given', async () => {
    const only = tempDir('ongrid-native-env-');
    dirs.push(only);
    writeSpec(only, 'x', `---\nname: x\ndescription: d\nmetadata:\n  requires:\n    config: [ONGRID_TEST_NEEDED]\ntools:\n${tool('cfg_tool')}---\n`);
    assert.equal((await load(only, {})).native('cfg_tool')?.available, false);
    const set = (await load(only, { ONGRID_TEST_NEEDED: 'yes' })).native('cfg_tool');
    assert.equal(set?.available, true);
    assert.equal(set?.unavailableReason, undefined);
  });

  test('a tool name already registered by an earlier SKILL.md is skipped, the first one wins', async () => {
    const { native, logs } = await load(root);
    assert.equal(native('good_one')?.specPath, goodPath);
    assert.ok(logs.messages().some((m) => m.startsWith('skill loader: skill "good_one" already registered, skipping')));
  });

  test('a missing dir registers nothing and does not throw', async () => {
    const { n, logs } = await load(path.join(root, 'does-not-exist'));
    assert.equal(n, 0);
    assert.ok(logs.messages().includes('skill loader: 0 native skills registered'));
  });
});

describe('the shipped skills/ folder', () => {
  const shipped = loadConfig({}).nativeSkillsDir;

  test('loads system_info, http_probe and query_promql without a single warning', async () => {
    const { registry, logs, n } = await load(shipped, { PATH: process.env.PATH });
    assert.deepEqual(
      registry.list().map((s) => s.name),
      ['http_probe', 'query_promql', 'system_info'],
    );
    assert.equal(n, 3);
    assert.deepEqual(logs.lines.filter((l) => l.level >= 40), []);
    for (const s of registry.list()) assert.equal(s.class, 'safe', `${s.name} is class read`);
  });

  test('query_promql is unavailable until ONGRID_PROMETHEUS_URL is set', async () => {
    const without = (await load(shipped, {})).native('query_promql');
    assert.equal(without?.available, false);
    assert.match(without?.unavailableReason ?? '', /ONGRID_PROMETHEUS_URL/);
    const withUrl = (await load(shipped, { ONGRID_PROMETHEUS_URL: 'http://127.0.0.1:9' })).native('query_promql');
    assert.equal(withUrl?.available, true);
  });

  test('system_info really runs and reports this host', async () => {
    const s = (await load(shipped)).native('system_info');
    assert.ok(s);
    assert.equal(s.validate({}), true);
    assert.equal(s.validate({ surprise: 1 }), false, 'takes no arguments');
    const r = (await s.impl({}, ctx())) as Record<string, any>;
    assert.equal(r.hostname, (await import('node:os')).hostname());
    assert.equal(r.os.platform, process.platform);
    assert.ok(Number.isInteger(r.uptime_seconds) && r.uptime_seconds >= 0);
    assert.ok(r.memory.total_bytes > 0 && r.memory.used_bytes <= r.memory.total_bytes);
    assert.equal(typeof r.load_average['1m'], 'number');
    assert.ok(r.cpus.count >= 1);
  });
});
