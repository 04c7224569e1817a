import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSkillMd, parseTool, type SkillMdSpec, type NativeToolSpec } from '../../../src/skills/native/skill-md.js';

const VALID = `---
name: host-tools
description: Tools about the host.
when_to_use: When the host misbehaves.
activation: always
metadata:
  os: [linux, darwin]
  requires:
    bins: [uptime]
    config: [SOME_URL]
  ongrid:
    category: observability
tools:
  - name: host_facts
    impl: builtin:system.SystemInfo
    class: read
    description: Facts about the host.
  - name: restart_thing
    impl: builtin:system.SystemInfo
    class: write
    description: Restarts a thing.
    timeout_seconds: 12
    schema:
      type: object
      required: [name]
      properties:
        name: { type: string }
  - name: wipe_thing
    impl: builtin:system.SystemInfo
    class: destructive
    description: Wipes a thing.
---

# Body text is documentation and is ignored.
`;

function spec(text: string): SkillMdSpec {
  const r = parseSkillMd(text);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.spec;
}

function okTool(raw: unknown): NativeToolSpec {
  const r = parseTool(raw, 0);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.tool;
}

function toolReason(raw: unknown): string {
  const r = parseTool(raw, 0);
  assert.equal(r.ok, false);
  return r.ok ? '' : r.reason;
}

const base = { name: 'a_tool', impl: 'builtin:system.SystemInfo', class: 'read', description: 'does a' };

describe('SKILL.md frontmatter', () => {
  test('a valid file yields its metadata, requirements, category and every tool in order', () => {
    const s = spec(VALID);
    assert.equal(s.name, 'host-tools');
    assert.equal(s.description, 'Tools about the host.');
    assert.equal(s.whenToUse, 'When the host misbehaves.');
    assert.equal(s.activation, 'always');
    assert.deepEqual(s.requires, { os: ['linux', 'darwin'], bins: ['uptime'], config: ['SOME_URL'] });
    assert.equal(s.category, 'observability');
    assert.deepEqual(
      s.tools.map((t) => (t.ok ? t.tool.name : t.reason)),
      ['host_facts', 'restart_thing', 'wipe_thing'],
    );
  });

  test('read, write and destructive map to safe, mutating and dangerous', () => {
    const classes = spec(VALID).tools.map((t) => (t.ok ? t.tool.class : 'broken'));
    assert.deepEqual(classes, ['safe', 'mutating', 'dangerous']);
  });

  test('a tool without schema gets the empty object schema and the 30 s default timeout', () => {
    const t = okTool(base);
    assert.deepEqual(t.schema, { type: 'object', properties: {} });
    assert.equal(t.timeoutSeconds, 30);
  });

  test('a declared schema and timeout_seconds are kept; timeout <= 0 falls back to 30', () => {
    const [, restart] = spec(VALID).tools;
    assert.ok(restart?.ok);
    assert.equal(restart.tool.timeoutSeconds, 12);
    assert.deepEqual(restart.tool.schema, { type: 'object', required: ['name'], properties: { name: { type: 'string' } } });
    assert.equal(okTool({ ...base, timeout_seconds: 0 }).timeoutSeconds, 30);
  });

  test('without metadata there are no requirements and the category is "native"', () => {
    const s = spec('---\nname: x\ndescription: d\ntools:\n  - {name: t, impl: builtin:a.B, class: read, description: d}\n---\n');
    assert.deepEqual(s.requires, { bins: [], config: [] });
    assert.equal(s.category, 'native');
    assert.equal(s.whenToUse, undefined);
  });

  test('a file without frontmatter, with broken YAML or with a non-mapping is rejected with a reason', () => {
    const no = parseSkillMd('# just markdown\n');
    assert.equal(no.ok, false);
    assert.match(no.ok ? '' : no.reason, /no YAML frontmatter/);
    const unclosed = parseSkillMd('---\nname: x\n');
    assert.match(unclosed.ok ? '' : unclosed.reason, /not closed/);
    const bad = parseSkillMd('---\nname: [unclosed\n---\n');
    assert.match(bad.ok ? '' : bad.reason, /invalid YAML/);
    const list = parseSkillMd('---\n- a\n- b\n---\n');
    assert.match(list.ok ? '' : list.reason, /not a YAML mapping/);
  });

  test('missing name, description or tools reject the whole file', () => {
    const noName = parseSkillMd('---\ndescription: d\ntools: [{name: t}]\n---\n');
    assert.match(noName.ok ? '' : noName.reason, /missing field "name"/);
    const noDesc = parseSkillMd('---\nname: x\ntools: [{name: t}]\n---\n');
    assert.match(noDesc.ok ? '' : noDesc.reason, /description/);
    const noTools = parseSkillMd('---\nname: x\ndescription: d\n---\n');
    assert.match(noTools.ok ? '' : noTools.reason, /tools must be a non-empty list/);
  });

  test('requirements of the wrong shape reject the file', () => {
    const r = parseSkillMd('---\nname: x\ndescription: d\nmetadata:\n  requires:\n    bins: kubectl\ntools: [{name: t}]\n---\n');
    assert.match(r.ok ? '' : r.reason, /metadata\.requires\.bins must be a list/);
  });

  test('a broken tool is reported by name while its siblings stay valid', () => {
    const s = spec('---\nname: x\ndescription: d\ntools:\n  - {name: good, impl: builtin:a.B, class: read, description: d}\n  - {name: bad, impl: builtin:a.B, class: wild, description: d}\n---\n');
    assert.equal(s.tools[0]?.ok, true);
    const bad = s.tools[1];
    assert.ok(bad && !bad.ok);
    assert.equal(bad.name, 'bad');
    assert.match(bad.reason, /class "wild" invalid/);
  });

  test('each tool field rule names what is wrong', () => {
    assert.match(toolReason({ ...base, name: undefined }), /missing field "name"/);
    assert.match(toolReason({ ...base, name: 'Bad-Name' }), /name "Bad-Name" invalid/);
    assert.match(toolReason({ ...base, description: '  ' }), /description must be a non-empty string/);
    assert.match(toolReason({ ...base, impl: undefined }), /missing field "impl"/);
    assert.match(toolReason({ ...base, impl: 'python:foo.bar' }), /impl "python:foo.bar" invalid/);
    assert.match(toolReason({ ...base, class: undefined }), /missing field "class"/);
    // The service's own class names are not SKILL.md class names.
    assert.match(toolReason({ ...base, class: 'safe' }), /class "safe" invalid/);
    assert.match(toolReason({ ...base, schema: { type: 'string' } }), /schema must describe type "object"/);
    assert.match(toolReason({ ...base, timeout_seconds: 1.5 }), /timeout_seconds must be an integer/);
    assert.match(toolReason('just a string'), /tools\[0\] must be a mapping/);
  });
});
