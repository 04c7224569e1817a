import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

const PERSONAS = {
  'ops.md': '---\nname: ops\ndescription: confirms mutating\npermission_mode: mutating-with-confirm\n---\n',
  'narrow.md': '---\nname: narrow\ndescription: only ext_ tools\npermission_mode: dual-sign-required\ntools: [ext_*]\ndisallowed_tools: [ext_nuke]\n---\n',
};

describe('GET /v1/tools', () => {
  let t: TestApp;
  const dirs: string[] = [];
  before(async () => {
    const root = tempDir('ongrid-tools-skills-');
    const personas = tempDir('ongrid-tools-personas-');
    dirs.push(root, personas);
    const input = { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false };
    writeSkill(root, { name: 'ext_read', script: 'cat', manifest: { class: 'safe', schema: input } });
    writeSkill(root, { name: 'ext_write', script: 'echo {}', manifest: { class: 'mutating' } });
    writeSkill(root, { name: 'ext_nuke', script: 'echo {}', manifest: { class: 'dangerous' } });
    for (const [f, text] of Object.entries(PERSONAS)) fs.writeFileSync(path.join(personas, f), text);
    t = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: personas });
  });
  after(async () => {
    await t.close();
    for (const d of [...dirs, t.dataDir]) fs.rmSync(d, { recursive: true, force: true });
  });

  const get = (url: string, persona?: string) =>
    t.app.inject({ url, headers: persona ? { 'x-ongrid-persona': persona } : {} });
  const names = (body: { tools: Array<Record<string, any>> }) =>
    body.tools.map((d) => (d.type === 'function' ? d.function.name : d.name) as string);

  /** Names of the registered skills that are available (query_promql depends on the environment). */
  async function availableNative(): Promise<string[]> {
    const r = (await get('/v1/skills?source=native')).json();
    return r.items.filter((s: { available: boolean }) => s.available).map((s: { name: string }) => s.name);
  }

  test('defaults to openai: function tools for the default persona, safe and available ones, by name', async () => {
    const r = await get('/v1/tools');
    assert.equal(r.statusCode, 200);
    const body = r.json();
    assert.equal(body.format, 'openai');
    const expected = ['ext_read', ...(await availableNative())].sort();
    assert.deepEqual(names(body), expected);
    const ext = body.tools.find((d: any) => d.function.name === 'ext_read');
    assert.deepEqual(ext, {
      type: 'function',
      function: {
        name: 'ext_read',
        description: 'test skill ext_read',
        parameters: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
      },
    });
  });

  test('the shipped native skills are offered, an unavailable one is not', async () => {
    const offered = names((await get('/v1/tools')).json());
    assert.ok(offered.includes('system_info'));
    assert.ok(offered.includes('http_probe'));
    const promql = (await get('/v1/skills/query_promql')).json();
    assert.equal(offered.includes('query_promql'), promql.available);
  });

  test('format=anthropic and format=mcp answer their vendor shapes', async () => {
    const a = (await get('/v1/tools?format=anthropic')).json();
    assert.equal(a.format, 'anthropic');
    assert.deepEqual(Object.keys(a.tools[0]).sort(), ['description', 'input_schema', 'name']);
    const m = (await get('/v1/tools?format=mcp', 'ops')).json();
    assert.equal(m.format, 'mcp');
    const byName = Object.fromEntries(m.tools.map((d: any) => [d.name, d]));
    assert.deepEqual(byName.ext_read.annotations, { readOnlyHint: true, destructiveHint: false });
    assert.deepEqual(byName.ext_write.annotations, { readOnlyHint: false, destructiveHint: false });
    assert.deepEqual(byName.system_info.inputSchema, { type: 'object', properties: {}, additionalProperties: false });
  });

  test('the persona decides: approval-gated skills are listed, forbidden ones are not', async () => {
    const ops = names((await get('/v1/tools', 'ops')).json());
    assert.ok(ops.includes('ext_write'), 'mutating needs one approval for ops: listed');
    assert.equal(ops.includes('ext_nuke'), false, 'dangerous is forbidden for ops');
    assert.deepEqual(names((await get('/v1/tools?format=mcp', 'narrow')).json()), ['ext_read', 'ext_write']);
    assert.equal(names((await get('/v1/tools')).json()).includes('ext_write'), false, 'default persona is read-only');
  });

  test('an unknown format is 400 invalid_request; an unknown persona 400 unknown_persona', async () => {
    const bad = await get('/v1/tools?format=gemini');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'invalid_request');
    const nobody = await get('/v1/tools', 'nobody');
    assert.equal(nobody.statusCode, 400);
    assert.equal(nobody.json().error.code, 'unknown_persona');
  });

  test('a native skill executes through the same path as REST and is recorded', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/skills/system_info/execute', payload: {}, headers: { 'x-ongrid-subject': 'alice' } });
    assert.equal(r.statusCode, 200);
    const exec = r.json();
    assert.equal(exec.status, 'succeeded');
    assert.equal(exec.requested_by, 'alice');
    assert.equal(exec.result.os.platform, process.platform);
    const listed = (await get('/v1/executions?skill=system_info')).json();
    assert.equal(listed.items[0].id, exec.id);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/skills/system_info/execute', payload: { args: { x: 1 } } });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.code, 'invalid_args');
  });

  test('an unavailable native skill answers 409 skill_unavailable with its reason', async (ctx) => {
    const promql = (await get('/v1/skills/query_promql')).json();
    if (promql.available) return ctx.skip('ONGRID_PROMETHEUS_URL is set in this environment');
    assert.match(promql.unavailable_reason, /ONGRID_PROMETHEUS_URL/);
    const r = await t.app.inject({ method: 'POST', url: '/v1/skills/query_promql/execute', payload: { args: { query: 'up' } } });
    assert.equal(r.statusCode, 409);
    assert.equal(r.json().error.code, 'skill_unavailable');
  });
});
