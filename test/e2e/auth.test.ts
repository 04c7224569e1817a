/**
 * API tokens over HTTP (CONTRACT sections 7 and 12): every /v1 route and /mcp needs a bearer
 * token when ONGRID_API_TOKENS_FILE is set, the subject comes from the token, ops routes stay
 * open, auth runs before the body is read, and no token ever reaches the logs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { eventually, startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

const TOKENS = {
  alice: 'alice-0f3c9a7e5b1d4c2a8e6f0b9d7c5a3e1f',
  bob: 'bob-77d2e4c6a8b0f1e3d5c7a9b2e4f6a8c0d',
  carol: 'carol-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6',
};
/** Same length as alice's token, last byte different. */
const ALMOST_ALICE = TOKENS.alice.slice(0, -1) + (TOKENS.alice.endsWith('f') ? 'e' : 'f');

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Res {
  status: number;
  body: any;
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('auth with ONGRID_API_TOKENS_FILE', () => {
  let app: TestApp;
  let base: string;
  let port: number;
  let skillDir: string;

  async function call(method: string, url: string, opts: { token?: string; headers?: Record<string, string>; raw?: string; body?: unknown } = {}): Promise<Res> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + url, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  }

  /** One raw HTTP/1.1 request, for request targets fetch would normalise away. */
  function rawRequest(target: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      });
      let out = '';
      sock.setEncoding('utf8');
      sock.on('data', (c: string) => (out += c));
      sock.on('error', reject);
      sock.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0)));
    });
  }

  before(async () => {
    const d = tempDir('ongrid-auth-e2e-');
    dirs.push(d);
    const root = path.join(d, 'skills');
    const pdir = path.join(d, 'personas');
    fs.mkdirSync(pdir, { recursive: true });
    writeSkill(root, { name: 'whoami', script: `echo '{"ok":true}'` });
    skillDir = writeSkill(root, { name: 'wipe_disk', script: 'echo run >> runs.log\necho \'{"wiped":true}\'', manifest: { class: 'dangerous' } });
    fs.writeFileSync(path.join(pdir, 'sre.md'), '---\nname: sre\ndescription: dual\npermission_mode: dual-sign-required\n---\n');
    const tokensFile = path.join(d, 'tokens.json');
    fs.writeFileSync(
      tokensFile,
      JSON.stringify(Object.entries(TOKENS).map(([subject, token]) => ({ subject, token_sha256: sha256(token) }))),
    );
    app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: pdir, ONGRID_API_TOKENS_FILE: tokensFile });
    base = await app.app.listen({ host: '127.0.0.1', port: 0 });
    port = Number(new URL(base).port);
  });
  after(async () => {
    await app.close();
    fs.rmSync(app.dataDir, { recursive: true, force: true });
  });

  const ID = '00000000-0000-0000-0000-000000000000';
  const V1_ROUTES: Array<[string, string]> = [
    ['GET', '/v1/skills'],
    ['GET', '/v1/skills/whoami'],
    ['GET', '/v1/skills/no_such_skill'],
    ['POST', '/v1/skills/whoami/execute'],
    ['GET', '/v1/executions'],
    ['GET', `/v1/executions/${ID}`],
    ['GET', `/v1/executions/${ID}/events`],
    ['POST', `/v1/executions/${ID}/approve`],
    ['POST', `/v1/executions/${ID}/reject`],
    ['POST', `/v1/executions/${ID}/cancel`],
    ['GET', '/v1/personas'],
    ['GET', '/v1/personas/default'],
    ['GET', '/v1/tools?format=openai'],
    ['GET', '/v1/no_such_route'],
    ['POST', '/mcp'],
  ];

  test('no token: every /v1 route and /mcp answers 401 unauthorized', async () => {
    for (const [method, url] of V1_ROUTES) {
      const res = await call(method, url, method === 'POST' ? { body: {} } : {});
      assert.equal(res.status, 401, `${method} ${url}`);
      assert.equal(res.body.error.code, 'unauthorized', `${method} ${url}`);
    }
  });

  test('a wrong token answers 401 on every /v1 route', async () => {
    for (const [method, url] of V1_ROUTES) {
      const res = await call(method, url, { token: 'not-a-token' });
      assert.equal(res.status, 401, `${method} ${url}`);
      assert.equal(res.body.error.code, 'unauthorized');
    }
  });

  test('a token of the right length that differs only in its last byte is refused', async () => {
    assert.equal(ALMOST_ALICE.length, TOKENS.alice.length);
    assert.notEqual(ALMOST_ALICE, TOKENS.alice);
    const res = await call('GET', '/v1/skills', { token: ALMOST_ALICE });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
  });

  test('a 401 tells the client which scheme to use (WWW-Authenticate: Bearer)', async () => {
    const res = await fetch(`${base}/v1/skills`);
    await res.arrayBuffer();
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
  });

  test('other schemes, an empty bearer and the token without a scheme are refused', async () => {
    for (const authorization of [`Basic ${Buffer.from(`alice:${TOKENS.alice}`).toString('base64')}`, 'Bearer ', TOKENS.alice, `Token ${TOKENS.alice}`]) {
      const res = await call('GET', '/v1/skills', { headers: { authorization } });
      assert.equal(res.status, 401, authorization.slice(0, 6));
    }
  });

  test('another spelling of a /v1 route is not a way around the token', async () => {
    for (const target of [`http://127.0.0.1:${port}/v1/personas`, '/%761/personas', '/v1/%70ersonas', '/v1//personas', '/v1/personas/']) {
      assert.equal(await rawRequest(target), 401, target);
    }
  });

  test('the right token works and its subject becomes requested_by', async () => {
    const list = await call('GET', '/v1/skills', { token: TOKENS.alice });
    assert.equal(list.status, 200);
    assert.ok(list.body.items.some((s: { name: string }) => s.name === 'whoami'));
    const res = await call('POST', '/v1/skills/whoami/execute', { token: TOKENS.bob, body: { args: {} } });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'succeeded');
    assert.equal(res.body.requested_by, 'bob');
  });

  test('X-Ongrid-Subject cannot override the token subject when auth is on', async () => {
    const res = await call('POST', '/v1/skills/whoami/execute', { token: TOKENS.alice, headers: { 'x-ongrid-subject': 'mallory' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.requested_by, 'alice');
  });

  test('approvals act as the token subject: self-approval refused, a spoofed header counts as its real subject', async () => {
    const req = await call('POST', '/v1/skills/wipe_disk/execute', {
      token: TOKENS.alice,
      headers: { 'x-ongrid-persona': 'sre' },
      body: { args: {} },
    });
    assert.equal(req.status, 202);
    assert.equal(req.body.requested_by, 'alice');
    const id = req.body.id;

    const self = await call('POST', `/v1/executions/${id}/approve`, { token: TOKENS.alice, headers: { 'x-ongrid-subject': 'bob' } });
    assert.equal(self.status, 403);
    assert.equal(self.body.error.code, 'self_approval');

    const bob = await call('POST', `/v1/executions/${id}/approve`, { token: TOKENS.bob });
    assert.equal(bob.status, 200);
    assert.deepEqual(bob.body.approvals.map((a: { subject: string }) => a.subject), ['bob']);
    const bobAgain = await call('POST', `/v1/executions/${id}/approve`, { token: TOKENS.bob, headers: { 'x-ongrid-subject': 'carol' } });
    assert.equal(bobAgain.status, 409);
    assert.equal(bobAgain.body.error.code, 'already_approved');

    const carol = await call('POST', `/v1/executions/${id}/approve`, { token: TOKENS.carol });
    assert.equal(carol.status, 200);
    const done = await eventually(
      async () => {
        const g = await call('GET', `/v1/executions/${id}`, { token: TOKENS.bob });
        return g.body.status === 'succeeded' ? g.body : undefined;
      },
      10_000,
      'the approved execution to succeed',
    );
    assert.deepEqual(done.approvals.map((a: { subject: string }) => a.subject), ['bob', 'carol']);
    assert.equal(fs.readFileSync(path.join(skillDir, 'runs.log'), 'utf8').trim().split('\n').length, 1);
  });

  test('/healthz, /readyz, /openapi.json, /metrics and /docs need no token', async () => {
    assert.equal((await call('GET', '/healthz')).status, 200);
    assert.equal((await call('GET', '/readyz')).status, 200);
    const spec = await call('GET', '/openapi.json');
    assert.equal(spec.status, 200);
    assert.ok(spec.body.paths, 'the OpenAPI document');
    assert.notEqual((await call('GET', '/metrics')).status, 401);
    const docs = await fetch(`${base}/docs`, { redirect: 'manual' });
    await docs.arrayBuffer();
    assert.notEqual(docs.status, 401);
  });

  test('auth is checked before the body: malformed or oversized bodies without a token are 401', async () => {
    const malformed = await call('POST', '/v1/skills/whoami/execute', { raw: '{"args": ' });
    assert.equal(malformed.status, 401);
    assert.equal(malformed.body.error.code, 'unauthorized');
    const huge = await call('POST', '/v1/skills/whoami/execute', { raw: JSON.stringify({ args: { x: 'a'.repeat(2 * 1024 * 1024) } }) });
    assert.equal(huge.status, 401);
    // With a token the same malformed body reaches the parser.
    const authed = await call('POST', '/v1/skills/whoami/execute', { token: TOKENS.alice, raw: '{"args": ' });
    assert.equal(authed.status, 400);
    assert.equal(authed.body.error.code, 'invalid_json');
  });

  test('no raw token, right or wrong, ever appears in the logs', async () => {
    // Make sure the logs hold request lines from this suite before looking.
    assert.ok(app.logs.lines.length > 0);
    const text = app.logs.text();
    for (const token of [...Object.values(TOKENS), ALMOST_ALICE, 'not-a-token']) {
      assert.ok(!text.includes(token), `a token leaked into the logs`);
    }
    assert.ok(!/bearer/i.test(text), 'no Authorization header in the logs');
  });
});

describe('auth off', () => {
  test('without a tokens file the subject is X-Ongrid-Subject, else anonymous', async () => {
    const d = tempDir('ongrid-auth-off-');
    dirs.push(d);
    writeSkill(d, { name: 'whoami', script: `echo '{"ok":true}'` });
    const app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: d });
    try {
      const base = await app.app.listen({ host: '127.0.0.1', port: 0 });
      const named = await fetch(`${base}/v1/skills/whoami/execute`, { method: 'POST', headers: { 'x-ongrid-subject': 'dora' } });
      assert.equal(named.status, 200);
      assert.equal(((await named.json()) as { requested_by: string }).requested_by, 'dora');
      const anon = await fetch(`${base}/v1/skills/whoami/execute`, { method: 'POST' });
      assert.equal(anon.status, 200);
      assert.equal(((await anon.json()) as { requested_by: string }).requested_by, 'anonymous');
    } finally {
      await app.close();
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });
});
