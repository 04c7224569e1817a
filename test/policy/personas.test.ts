import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { DEFAULT_PERSONA, loadPersonas, parsePersonaFile, toPersonaJson } from '../../src/policy/personas.js';

const WARN = 40;
const INFO = 30;

/** A pino logger whose lines land in `lines` as { level, msg }. */
function captureLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'debug' }, {
    write(chunk: string) {
      const { level, msg } = JSON.parse(chunk) as { level: number; msg: string };
      lines.push({ level, msg });
    },
  });
  return { logger, lines };
}

const tmpRoots: string[] = [];
after(() => {
  for (const d of tmpRoots) fs.rmSync(d, { recursive: true, force: true });
});

function personaDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-personas-'));
  tmpRoots.push(dir);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

function load(files: Record<string, string>) {
  const dir = personaDir(files);
  const { logger, lines } = captureLogger();
  const map = loadPersonas([dir], logger);
  return { dir, map, lines };
}

const OPS = `---
name: ops
description: Operators on call
permission_mode: dual-sign-required
tools:
  - probe_*
  - disk_usage
disallowed_tools: ["*_drop"]
---
You are the on-call operator.
`;

describe('parsePersonaFile', () => {
  test('a valid file with YAML list tools gives the persona with its source path', () => {
    const r = parsePersonaFile(OPS, '/p/ops.md');
    assert.deepEqual(r, {
      ok: true,
      persona: {
        name: 'ops',
        description: 'Operators on call',
        permission_mode: 'dual-sign-required',
        tools: ['probe_*', 'disk_usage'],
        disallowed_tools: ['*_drop'],
        source: '/p/ops.md',
      },
    });
  });

  test('comma-separated tools are split and trimmed; CRLF line endings are fine', () => {
    const text = '---\r\nname: analyst\r\npermission_mode: read-only\r\ntools: query_*, disk_usage ,\r\ndisallowed_tools: query_secrets\r\n---\r\n';
    const r = parsePersonaFile(text, '/p/a.md');
    assert.ok(r.ok);
    assert.deepEqual(r.persona.tools, ['query_*', 'disk_usage']);
    assert.deepEqual(r.persona.disallowed_tools, ['query_secrets']);
    assert.equal(r.persona.description, '');
  });

  test('unknown fields are ignored and absent lists are empty', () => {
    const r = parsePersonaFile('---\nname: x\npermission_mode: read-only\nmodel: opus\ncolor: red\n---\n', '/p/x.md');
    assert.ok(r.ok);
    assert.deepEqual(toPersonaJson(r.persona), { name: 'x', description: '', permission_mode: 'read-only', tools: [], disallowed_tools: [] });
  });

  const bad: Array<[string, string, string]> = [
    ['no frontmatter', 'name: x\npermission_mode: read-only\n', 'no YAML frontmatter (the first line must be ---)'],
    ['unclosed frontmatter', '---\nname: x\npermission_mode: read-only\n', 'frontmatter is not closed by a --- line'],
    ['frontmatter that is not a mapping', '---\n- a\n- b\n---\n', 'frontmatter is not a YAML mapping'],
    ['empty frontmatter', '---\n---\n', 'frontmatter is not a YAML mapping'],
    ['missing name', '---\npermission_mode: read-only\n---\n', 'name is missing'],
    ['empty name', '---\nname: ""\npermission_mode: read-only\n---\n', 'name is missing'],
    ['numeric name', '---\nname: 42\npermission_mode: read-only\n---\n', 'name must be a string'],
    ['name with a space', '---\nname: on call\npermission_mode: read-only\n---\n', 'name "on call" is invalid (allowed: letters, digits, _ . -)'],
    ['description of the wrong type', '---\nname: x\ndescription: [a]\npermission_mode: read-only\n---\n', 'description must be a string'],
    ['missing permission_mode', '---\nname: x\n---\n', 'permission_mode is missing'],
    ['bad permission_mode', '---\nname: x\npermission_mode: yolo\n---\n', 'permission_mode "yolo" invalid (expected read-only, mutating-with-confirm, dual-sign-required)'],
    ['tools as a number', '---\nname: x\npermission_mode: read-only\ntools: 5\n---\n', 'tools must be a list of strings or a comma-separated string'],
    ['tools list with a non-string', '---\nname: x\npermission_mode: read-only\ntools: [a, {b: 1}]\n---\n', 'tools must be a list of strings or a comma-separated string'],
    ['disallowed_tools as a mapping', '---\nname: x\npermission_mode: read-only\ndisallowed_tools: {a: 1}\n---\n', 'disallowed_tools must be a list of strings or a comma-separated string'],
    ['a pattern with an inner *', '---\nname: x\npermission_mode: read-only\ntools: [a*b]\n---\n', 'tools entry "a*b" is not a skill name or pattern (* only at the start or end)'],
  ];
  for (const [what, text, reason] of bad) {
    test(`rejects ${what}`, () => {
      assert.deepEqual(parsePersonaFile(text, '/p/bad.md'), { ok: false, reason });
    });
  }

  test('a YAML syntax error gives a one-line reason with the line in the file', () => {
    const r = parsePersonaFile('---\nname: x\npermission_mode: read-only\ntools: [a, b\n---\n', '/p/bad.md');
    assert.ok(!r.ok);
    assert.match(r.reason, /^invalid YAML in frontmatter at line \d+: \S/);
    assert.doesNotMatch(r.reason, /\n/);
  });
});

describe('loadPersonas', () => {
  test('loads valid files, keeps the built-in default, and logs one info line per persona', () => {
    const { dir, map, lines } = load({ 'ops.md': OPS, 'analyst.md': '---\nname: analyst\npermission_mode: read-only\ntools: query_*, disk_usage\n---\n' });
    assert.deepEqual([...map.keys()].sort(), ['analyst', 'default', 'ops']);
    assert.deepEqual(map.get('analyst')?.tools, ['query_*', 'disk_usage']);
    assert.equal(map.get('default'), DEFAULT_PERSONA);
    assert.deepEqual(lines, [
      { level: INFO, msg: `persona loader: loaded persona "analyst" from ${path.join(dir, 'analyst.md')}` },
      { level: INFO, msg: `persona loader: loaded persona "ops" from ${path.join(dir, 'ops.md')}` },
    ]);
  });

  test('the built-in default is read-only and allows every tool', () => {
    const { map } = load({});
    assert.deepEqual(toPersonaJson(map.get('default')!), {
      name: 'default', description: DEFAULT_PERSONA.description, permission_mode: 'read-only', tools: [], disallowed_tools: [],
    });
    assert.equal(map.get('default')?.source, 'builtin');
    assert.ok(DEFAULT_PERSONA.description.length > 0);
  });

  const malformed: Array<[string, string, RegExp | string]> = [
    ['no frontmatter', '# just markdown\n', 'no YAML frontmatter (the first line must be ---)'],
    ['bad YAML', '---\nname: [x\n---\n', /^invalid YAML in frontmatter at line \d+: /],
    ['missing name', '---\npermission_mode: read-only\n---\n', 'name is missing'],
    ['bad permission_mode', '---\nname: x\npermission_mode: admin\n---\n', 'permission_mode "admin" invalid (expected read-only, mutating-with-confirm, dual-sign-required)'],
    ['tools of the wrong type', '---\nname: x\npermission_mode: read-only\ntools: true\n---\n', 'tools must be a list of strings or a comma-separated string'],
  ];
  for (const [what, text, reason] of malformed) {
    test(`a file with ${what} is skipped with one warn line naming the file and why, others still load`, () => {
      const { dir, map, lines } = load({ 'bad.md': text, 'good.md': OPS });
      assert.deepEqual([...map.keys()].sort(), ['default', 'ops']);
      const prefix = `persona loader: skip ${path.join(dir, 'bad.md')}: `;
      const warns = lines.filter((l) => l.level === WARN);
      assert.equal(warns.length, 1);
      assert.ok(warns[0]!.msg.startsWith(prefix), warns[0]!.msg);
      const why = warns[0]!.msg.slice(prefix.length);
      if (typeof reason === 'string') assert.equal(why, reason);
      else assert.match(why, reason);
    });
  }

  test('a file over 256 KiB is skipped as malformed', () => {
    const { dir, map, lines } = load({ 'big.md': OPS + 'x'.repeat(256 * 1024) });
    assert.equal(map.has('ops'), false);
    assert.deepEqual(lines, [{ level: WARN, msg: `persona loader: skip ${path.join(dir, 'big.md')}: file is larger than 256 KiB` }]);
  });

  test('a file defining "default" replaces the built-in', () => {
    const { dir, map } = load({ 'default.md': '---\nname: default\ndescription: site default\npermission_mode: mutating-with-confirm\n---\n' });
    const def = map.get('default');
    assert.equal(def?.permission_mode, 'mutating-with-confirm');
    assert.equal(def?.description, 'site default');
    assert.equal(def?.source, path.join(dir, 'default.md'));
    assert.equal(map.size, 1);
  });

  test('duplicates: the first in lexical order wins, the later one is logged and skipped', () => {
    const { dir, map, lines } = load({
      'b.md': '---\nname: twin\npermission_mode: dual-sign-required\n---\n',
      'a.md': '---\nname: twin\npermission_mode: read-only\n---\n',
    });
    assert.equal(map.get('twin')?.permission_mode, 'read-only');
    assert.deepEqual(lines, [
      { level: INFO, msg: `persona loader: loaded persona "twin" from ${path.join(dir, 'a.md')}` },
      { level: WARN, msg: `persona loader: persona "twin" already defined, skipping ${path.join(dir, 'b.md')}` },
    ]);
  });

  test('duplicates across dirs: the earlier dir wins', () => {
    const first = personaDir({ 'z.md': '---\nname: twin\npermission_mode: read-only\n---\n' });
    const second = personaDir({ 'a.md': '---\nname: twin\npermission_mode: dual-sign-required\n---\n' });
    const { logger, lines } = captureLogger();
    const map = loadPersonas([first, second], logger);
    assert.equal(map.get('twin')?.source, path.join(first, 'z.md'));
    assert.equal(lines.at(-1)?.msg, `persona loader: persona "twin" already defined, skipping ${path.join(second, 'a.md')}`);
  });

  test('non-.md files and subfolders are ignored without a log line', () => {
    const dir = personaDir({ 'notes.txt': OPS, 'ops.md.bak': OPS, 'README': OPS });
    fs.mkdirSync(path.join(dir, 'nested'));
    fs.writeFileSync(path.join(dir, 'nested', 'ops.md'), OPS);
    const { logger, lines } = captureLogger();
    const map = loadPersonas([dir], logger);
    assert.deepEqual([...map.keys()], ['default']);
    assert.deepEqual(lines, []);
  });

  test('a folder named like a persona file is skipped as not a regular file', () => {
    const dir = personaDir({});
    fs.mkdirSync(path.join(dir, 'folder.md'));
    const { logger, lines } = captureLogger();
    loadPersonas([dir], logger);
    assert.deepEqual(lines, [{ level: WARN, msg: `persona loader: skip ${path.join(dir, 'folder.md')}: not a regular file` }]);
  });

  test('a missing dir is skipped with a log line and the rest still loads', () => {
    const good = personaDir({ 'ops.md': OPS });
    const missing = path.join(good, 'does-not-exist');
    const { logger, lines } = captureLogger();
    const map = loadPersonas([missing, good], logger);
    assert.ok(map.has('ops'));
    assert.deepEqual(lines[0], { level: WARN, msg: `persona loader: dir ${missing} not present, skipping` });
  });

  test('a dir that is a file is skipped with a log line', () => {
    const dir = personaDir({ 'ops.md': OPS });
    const file = path.join(dir, 'ops.md');
    const { logger, lines } = captureLogger();
    const map = loadPersonas([file], logger);
    assert.deepEqual([...map.keys()], ['default']);
    assert.deepEqual(lines, [{ level: WARN, msg: `persona loader: ${file} is not a directory, skipping` }]);
  });

  test('a relative dir is skipped with a log line', () => {
    const { logger, lines } = captureLogger();
    const map = loadPersonas(['relative/personas'], logger);
    assert.deepEqual([...map.keys()], ['default']);
    assert.deepEqual(lines, [{ level: WARN, msg: 'persona loader: skip non-absolute dir "relative/personas"' }]);
  });

  test('no dirs at all gives just the built-in default', () => {
    const { logger, lines } = captureLogger();
    assert.deepEqual([...loadPersonas([], logger).values()], [DEFAULT_PERSONA]);
    assert.deepEqual(lines, []);
  });
});
