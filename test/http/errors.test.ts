import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

function assertEnvelope(body: unknown, code: string): void {
  const b = body as { error: { code: string; message: string } };
  assert.equal(b.error.code, code);
  assert.equal(typeof b.error.message, 'string');
  assert.doesNotMatch(JSON.stringify(b), /\bat .*\.(ts|js):\d+/, 'no stack trace in an error response');
}

describe('error envelope (CONTRACT section 11)', () => {
  let t: TestApp;
  before(async () => {
    const root = tempDir('ongrid-errors-');
    writeSkill(root, { name: 'echo', script: 'cat' });
    t = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root });
  });
  after(() => t.close());

  test('malformed JSON is 400 invalid_json', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/skills/echo/execute', headers: { 'content-type': 'application/json' }, payload: '{"args": ' });
    assert.equal(r.statusCode, 400);
    assertEnvelope(r.json(), 'invalid_json');
  });

  test('JSON sent with another content type is still parsed as JSON', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/skills/echo/execute', headers: { 'content-type': 'text/plain' }, payload: '{"args": {"a": 1}}' });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json().result, { a: 1 });
  });

  test('a body over 1 MiB is 413 payload_too_large', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/skills/echo/execute',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ args: { pad: 'x'.repeat(1024 * 1024) } }),
    });
    assert.equal(r.statusCode, 413);
    assertEnvelope(r.json(), 'payload_too_large');
  });

  test('wrong field types are 400 invalid_request', async () => {
    for (const payload of [{ args: [] }, { args: 'x' }, { wait: 'yes' }, [1, 2], 'just a string']) {
      const r = await t.app.inject({ method: 'POST', url: '/v1/skills/echo/execute', payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
      assert.equal(r.statusCode, 400, JSON.stringify(payload));
      assertEnvelope(r.json(), 'invalid_request');
    }
  });

  test('no body at all runs with empty args', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/skills/echo/execute' });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json().args, {});
  });

  test('prototype poisoning in the body is refused', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/skills/echo/execute', headers: { 'content-type': 'application/json' }, payload: '{"args": {"__proto__": {"x": 1}}}' });
    assert.equal(r.statusCode, 400);
    assertEnvelope(r.json(), 'invalid_json');
  });

  test('an unknown route is 404 not_found', async () => {
    for (const [method, url] of [['GET', '/nope'], ['POST', '/v1/unknown'], ['DELETE', '/v1/skills']] as const) {
      const r = await t.app.inject({ method, url });
      assert.equal(r.statusCode, 404, url);
      assertEnvelope(r.json(), 'not_found');
    }
  });

  test('healthz is up and readyz is ready after start', async () => {
    assert.equal((await t.app.inject('/healthz')).statusCode, 200);
    assert.deepEqual((await t.app.inject('/readyz')).json(), { status: 'ready' });
  });
});
