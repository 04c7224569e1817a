import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

describe('catalog routes', () => {
  let t: TestApp;
  before(async () => {
    const root = tempDir('ongrid-catalog-');
    writeSkill(root, { name: 'zeta_probe', script: 'echo {}', manifest: { class: 'safe', category: 'observability' } });
    writeSkill(root, { name: 'alpha_fix', script: 'echo {}', manifest: { class: 'mutating', category: 'ops' } });
    writeSkill(root, { name: 'Beta', script: 'echo {}' }); // invalid name: not listed
    writeSkill(root, { name: 'mid_danger', script: 'echo {}', manifest: { class: 'dangerous', category: 'ops', timeout_seconds: 5 } });
    t = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root });
  });
  after(() => t.close());

  test('GET /v1/skills lists valid skills sorted by name with total', async () => {
    const all = (await t.app.inject('/v1/skills')).json();
    assert.equal(all.total, all.items.length);
    const names = all.items.map((s: { name: string }) => s.name);
    assert.deepEqual(names, [...names].sort(), 'sorted by name');
    assert.ok(names.includes('system_info'), 'built-in native skills are listed too');
    const r = await t.app.inject('/v1/skills?source=external');
    assert.equal(r.statusCode, 200);
    const body = r.json();
    assert.deepEqual(
      body.items.map((s: { name: string }) => s.name),
      ['alpha_fix', 'mid_danger', 'zeta_probe'],
    );
    assert.equal(body.total, 3);
  });

  test('a Skill carries every contract field, external ones their manifest, entry and env_allow', async () => {
    const s = (await t.app.inject('/v1/skills/mid_danger')).json();
    assert.equal(s.name, 'mid_danger');
    assert.equal(s.class, 'dangerous');
    assert.equal(s.category, 'ops');
    assert.equal(s.source, 'external');
    assert.equal(s.timeout_seconds, 5);
    assert.equal(s.available, true);
    assert.equal('unavailable_reason' in s, false);
    assert.deepEqual(s.schema, { type: 'object', properties: {} });
    assert.match(s.manifest_path, /mid_danger\/skill\.json$/);
    assert.match(s.entry, /mid_danger\/run\.sh$/);
    assert.deepEqual(s.env_allow, ['PATH']);
  });

  test('filters by category, class and source, total counting matches', async () => {
    const names = async (q: string) => {
      const b = (await t.app.inject(`/v1/skills?source=external&${q}`)).json();
      assert.equal(b.total, b.items.length);
      return b.items.map((s: { name: string }) => s.name);
    };
    assert.deepEqual(await names('category=ops'), ['alpha_fix', 'mid_danger']);
    assert.deepEqual(await names('class=safe'), ['zeta_probe']);
    assert.deepEqual(await names('class=mutating&category=ops'), ['alpha_fix']);
    const native = (await t.app.inject('/v1/skills?source=native&category=ops')).json();
    assert.deepEqual(native, { items: [], total: 0 });
    assert.deepEqual(await names('category=nothing'), []);
  });

  test('an invalid filter value is 400 invalid_request', async () => {
    const r = await t.app.inject('/v1/skills?class=wild');
    assert.equal(r.statusCode, 400);
    assert.equal(r.json().error.code, 'invalid_request');
  });

  test('an unknown skill is 404 skill_not_found', async () => {
    const r = await t.app.inject('/v1/skills/no_such_skill');
    assert.equal(r.statusCode, 404);
    assert.deepEqual(Object.keys(r.json()), ['error']);
    assert.equal(r.json().error.code, 'skill_not_found');
  });
});
