import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildExternalSkill, validateFields, type ManifestFields } from '../../src/skills/manifest.js';
import { compileSchema, uses2020 } from '../../src/skills/schema-compiler.js';

const base = { name: 'disk_cleaner', description: 'Cleans disks', entry: 'run.sh' };

describe('validateFields: the first broken rule is reported with the name as written', () => {
  const NAME_RULE = '(must match ^[a-z0-9_]+$)';
  const cases: Array<[string, unknown, string, string]> = [
    ['top level array', [base], '', 'manifest must be a JSON object, got array'],
    ['top level null', null, '', 'manifest must be a JSON object, got null'],
    ['top level number', 42, '', 'manifest must be a JSON object, got number'],
    ['top level string', 'x', '', 'manifest must be a JSON object, got string'],
    ['name missing', { ...base, name: undefined }, '', 'missing field "name"'],
    ['name not a string', { ...base, name: 7 }, '', 'name must be a string, got number'],
    ['name empty', { ...base, name: '' }, '', `name "" invalid ${NAME_RULE}`],
    ['name with capitals', { ...base, name: 'Bad_Name' }, 'Bad_Name', `name "Bad_Name" invalid ${NAME_RULE}`],
    ['name with a dash', { ...base, name: 'bad-name' }, 'bad-name', `name "bad-name" invalid ${NAME_RULE}`],
    ['name with a space', { ...base, name: 'bad name' }, 'bad name', `name "bad name" invalid ${NAME_RULE}`],
    ['name non-ASCII', { ...base, name: 'naïve' }, 'naïve', `name "naïve" invalid ${NAME_RULE}`],
    ['description missing', { ...base, description: undefined }, 'disk_cleaner', 'missing field "description"'],
    ['description empty', { ...base, description: '' }, 'disk_cleaner', 'description must be a non-empty string'],
    ['description blank', { ...base, description: '  ' }, 'disk_cleaner', 'description must be a non-empty string'],
    ['description not a string', { ...base, description: 1 }, 'disk_cleaner', 'description must be a non-empty string'],
    ['entry missing', { ...base, entry: undefined }, 'disk_cleaner', 'missing field "entry"'],
    ['entry not a string', { ...base, entry: ['run.sh'] }, 'disk_cleaner', 'entry must be a non-empty string'],
    ['entry empty', { ...base, entry: '' }, 'disk_cleaner', 'entry must be a non-empty string'],
    ['class wild', { ...base, class: 'wild' }, 'disk_cleaner', 'class "wild" invalid'],
    ['class empty', { ...base, class: '' }, 'disk_cleaner', 'class "" invalid'],
    ['class number', { ...base, class: 1 }, 'disk_cleaner', 'class 1 invalid'],
    ['class null', { ...base, class: null }, 'disk_cleaner', 'class null invalid'],
    ['class upper case', { ...base, class: 'SAFE' }, 'disk_cleaner', 'class "SAFE" invalid'],
    ['timeout fractional', { ...base, timeout_seconds: 1.5 }, 'disk_cleaner', 'timeout_seconds must be an integer, got 1.5'],
    ['timeout string', { ...base, timeout_seconds: '10' }, 'disk_cleaner', 'timeout_seconds must be an integer, got "10"'],
    ['env_allow a string', { ...base, env_allow: 'PATH' }, 'disk_cleaner', 'env_allow must be an array of strings'],
    ['env_allow with a number', { ...base, env_allow: ['PATH', 1] }, 'disk_cleaner', 'env_allow must be an array of strings'],
    ['category a number', { ...base, category: 3 }, 'disk_cleaner', 'category must be a string'],
    ['schema of type string', { ...base, schema: { type: 'string' } }, 'disk_cleaner', 'schema must describe type "object"'],
    ['schema without type', { ...base, schema: { properties: {} } }, 'disk_cleaner', 'schema must describe type "object"'],
    ['schema an array', { ...base, schema: [] }, 'disk_cleaner', 'schema must describe type "object"'],
    ['schema true', { ...base, schema: true }, 'disk_cleaner', 'schema must describe type "object"'],
  ];
  for (const [title, raw, name, reason] of cases) {
    test(title, () => {
      // JSON round trip drops the `undefined` fields, as a real manifest would lack them.
      assert.deepEqual(validateFields(JSON.parse(JSON.stringify(raw))), { ok: false, name, reason });
    });
  }

  test('class is checked before timeout, so only the first problem is named', () => {
    const r = validateFields({ ...base, class: 'wild', timeout_seconds: 'x' });
    assert.deepEqual(r, { ok: false, name: 'disk_cleaner', reason: 'class "wild" invalid' });
  });

  test('a name inherited from the prototype does not count as present', () => {
    const raw = JSON.parse('{"description":"d","entry":"run.sh","__proto__":{"name":"sneaky"}}');
    assert.deepEqual(validateFields(raw), { ok: false, name: '', reason: 'missing field "name"' });
  });
});

describe('validateFields: defaults', () => {
  const fields = (raw: object): ManifestFields => {
    const r = validateFields(raw);
    assert.ok(r.ok, JSON.stringify(r));
    return r.fields;
  };

  test('a minimal manifest gets every default', () => {
    assert.deepEqual(fields(base), {
      name: 'disk_cleaner',
      description: 'Cleans disks',
      entry: 'run.sh',
      schema: { type: 'object', properties: {} },
      envAllow: [],
      timeoutSeconds: 30,
      class: 'safe',
      category: 'external',
    });
  });

  const timeouts: Array<[unknown, number]> = [[0, 30], [-5, 30], [1, 1], [45, 45]];
  for (const [given, expected] of timeouts) {
    test(`timeout_seconds ${String(given)} becomes ${expected}`, () => {
      assert.equal(fields({ ...base, timeout_seconds: given }).timeoutSeconds, expected);
    });
  }

  for (const klass of ['safe', 'mutating', 'dangerous']) {
    test(`class ${klass} is kept`, () => assert.equal(fields({ ...base, class: klass }).class, klass));
  }

  test('unknown top-level fields are ignored and given fields kept', () => {
    const f = fields({ ...base, env_allow: ['HOME'], category: 'disk', version: 3, author: { x: 1 } });
    assert.deepEqual([f.envAllow, f.category], [['HOME'], 'disk']);
  });
});

describe('schema compiler', () => {
  test('the compiled validator applies defaults and reports every error', () => {
    const c = compileSchema({
      type: 'object',
      properties: { path: { type: 'string' }, dry_run: { type: 'boolean', default: true } },
      required: ['path'],
    });
    assert.ok(c.ok);
    const args: Record<string, unknown> = { path: '/var/tmp' };
    assert.equal(c.validate(args), true);
    assert.deepEqual(args, { path: '/var/tmp', dry_run: true });
    assert.equal(c.validate({ dry_run: 'yes' }), false);
    assert.equal(c.validate.errors?.length, 2);
  });

  test('formats from ajv-formats are enforced', () => {
    const c = compileSchema({ type: 'object', properties: { to: { type: 'string', format: 'email' } } });
    assert.ok(c.ok);
    assert.equal(c.validate({ to: 'ops@example.com' }), true);
    assert.equal(c.validate({ to: 'not an email' }), false);
  });

  test('a 2020-12 schema is compiled with 2020-12 semantics', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] } },
    };
    assert.equal(uses2020(schema), true);
    const c = compileSchema(schema);
    assert.ok(c.ok);
    assert.equal(c.validate({ pair: ['a', 1] }), true);
    assert.equal(c.validate({ pair: [1, 'a'] }), false);
  });

  test('two schemas with the same $id compile independently', () => {
    const a = compileSchema({ $id: 'https://ongrid.example/args', type: 'object', required: ['a'] });
    const b = compileSchema({ $id: 'https://ongrid.example/args', type: 'object', required: ['b'] });
    assert.ok(a.ok && b.ok);
    assert.deepEqual([a.validate({ a: 1 }), b.validate({ a: 1 })], [true, false]);
  });

  test('an invalid schema reports ajv\'s message', () => {
    const c = compileSchema({ type: 'object', properties: { a: { type: 'nope' } } });
    assert.equal(c.ok, false);
    assert.match(c.ok ? '' : c.error, /^schema is invalid: .*properties\/a\/type/);
  });

  test('an unknown $schema draft is an error, not a silent fallback', () => {
    const c = compileSchema({ $schema: 'http://json-schema.org/draft-03/schema#', type: 'object' });
    assert.equal(c.ok, false);
  });
});

describe('buildExternalSkill (bytes + paths)', () => {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-manifest-')));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const packDir = path.join(tmp, 'pack');
  fs.mkdirSync(packDir);
  fs.writeFileSync(path.join(packDir, 'run.sh'), '#!/bin/sh\necho {}\n', { mode: 0o755 });
  const manifestPath = path.join(packDir, 'skill.json');
  const root = { root: tmp, rootReal: tmp };

  test('valid bytes make a frozen snapshot with the hash of exactly those bytes', async () => {
    const bytes = Buffer.from(JSON.stringify({ ...base, env_allow: ['HOME'], schema: { type: 'object', properties: { a: { type: 'string' } } } }));
    const r = await buildExternalSkill(bytes, manifestPath, root);
    assert.ok(r.ok);
    const s = r.skill;
    assert.equal(s.manifestSha256, createHash('sha256').update(bytes).digest('hex'));
    assert.deepEqual([s.dir, s.entry, s.root, s.rootReal], [packDir, path.join(packDir, 'run.sh'), tmp, tmp]);
    assert.ok(Object.isFrozen(s) && Object.isFrozen(s.schema) && Object.isFrozen(s.envAllow));
    assert.ok(Object.isFrozen((s.schema.properties as Record<string, object>).a));
  });

  test('a UTF-8 byte-order mark is tolerated', async () => {
    const r = await buildExternalSkill(Buffer.from('\uFEFF' + JSON.stringify(base)), manifestPath, root);
    assert.equal(r.ok, true);
  });

  test('a syntax error yields the parse line with JSON.parse\'s own message', async () => {
    const text = '{"name": "x",}';
    let expected = '';
    try {
      JSON.parse(text);
    } catch (err) {
      expected = (err as Error).message;
    }
    const r = await buildExternalSkill(Buffer.from(text), manifestPath, root);
    assert.deepEqual(r, { ok: false, msg: `skill loader: parse ${manifestPath}: ${expected}` });
  });

  test('a bad class is reported even when the entry is missing too', async () => {
    const r = await buildExternalSkill(Buffer.from(JSON.stringify({ ...base, entry: 'nope.sh', class: 'wild' })), manifestPath, root);
    assert.deepEqual(r, { ok: false, msg: 'skill loader: build "disk_cleaner": class "wild" invalid', skill: 'disk_cleaner' });
  });

  test('an entry that is a folder is refused', async () => {
    const r = await buildExternalSkill(Buffer.from(JSON.stringify({ ...base, entry: '.' })), manifestPath, root);
    assert.deepEqual(r, {
      ok: false,
      msg: `skill loader: build "disk_cleaner": entry ${packDir} is not a regular file`,
      skill: 'disk_cleaner',
    });
  });
});
