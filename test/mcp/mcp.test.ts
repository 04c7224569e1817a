import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';
import { listen } from '../helpers/http.js';

const PERSONAS = {
  'ops.md': '---\nname: ops\ndescription: confirms mutating\npermission_mode: mutating-with-confirm\n---\n',
};

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, any>; _meta?: Record<string, any> };

describe('MCP endpoint (/mcp, Streamable HTTP)', () => {
  let t: TestApp;
  let base: string;
  const dirs: string[] = [];
  const clients: Client[] = [];

  before(async () => {
    const root = tempDir('ongrid-mcp-skills-');
    const personas = tempDir('ongrid-mcp-personas-');
    dirs.push(root, personas);
    // Echoes its args back with a marker, and writes a stderr line for the timeline.
    writeSkill(root, {
      name: 'echo_args',
      script: 'read -r line; echo "got args" >&2; printf \'{"echo":%s,"ok":true}\' "$line"',
      manifest: { class: 'safe', schema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } },
    });
    writeSkill(root, { name: 'list_args', script: 'echo "[1,2,3]"', manifest: { class: 'safe' } });
    writeSkill(root, { name: 'fails_hard', script: 'echo "boom" >&2; exit 3', manifest: { class: 'safe' } });
    writeSkill(root, { name: 'restart_svc', script: 'echo {}', manifest: { class: 'mutating' } });
    writeSkill(root, { name: 'wipe_disk', script: 'echo {}', manifest: { class: 'dangerous' } });
    for (const [f, text] of Object.entries(PERSONAS)) fs.writeFileSync(path.join(personas, f), text);
    t = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: personas });
    base = await listen(t.app);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await t.close();
    for (const d of [...dirs, t.dataDir]) fs.rmSync(d, { recursive: true, force: true });
  });

  async function connect(headers: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: 'ongrid-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
    (await c.callTool({ name, arguments: args })) as ToolResult;

  test('initialize succeeds and names the server', async () => {
    const c = await connect();
    assert.equal(c.getServerVersion()?.name, 'ongrid-skills');
    assert.ok(c.getServerCapabilities()?.tools, 'tools capability announced');
  });

  test('tools/list is exactly GET /v1/tools?format=mcp for the same persona', async () => {
    for (const persona of ['default', 'ops']) {
      const c = await connect({ 'x-ongrid-persona': persona });
      const listed = await c.listTools();
      const rest = (await t.app.inject({ url: '/v1/tools?format=mcp', headers: { 'x-ongrid-persona': persona } })).json();
      assert.deepEqual(listed.tools, rest.tools, persona);
    }
    const ops = (await (await connect({ 'x-ongrid-persona': 'ops' })).listTools()).tools.map((x) => x.name);
    assert.ok(ops.includes('restart_svc'));
    assert.equal(ops.includes('wipe_disk'), false);
  });

  test('tools/call of a safe skill succeeds with the result as text and structured content, recorded like REST', async () => {
    const c = await connect({ 'x-ongrid-subject': 'agent-7' });
    const r = await call(c, 'echo_args', { word: 'hi' });
    assert.equal(r.isError, undefined);
    assert.deepEqual(JSON.parse(r.content[0]?.text ?? ''), { echo: { word: 'hi' }, ok: true });
    assert.deepEqual(r.structuredContent, { echo: { word: 'hi' }, ok: true });
    const id = r._meta?.execution_id as string;
    const rec = (await t.app.inject(`/v1/executions/${id}`)).json();
    assert.equal(rec.status, 'succeeded');
    assert.equal(rec.skill, 'echo_args');
    assert.equal(rec.requested_by, 'agent-7');
    assert.equal(rec.persona, 'default');
    assert.deepEqual(rec.args, { word: 'hi' });
    const list = (await t.app.inject('/v1/executions?skill=echo_args')).json();
    assert.ok(list.items.some((e: { id: string }) => e.id === id));
    const events = (await t.app.inject(`/v1/executions/${id}/events`)).json().items;
    assert.ok(events.some((e: { type: string; line?: string }) => e.type === 'stderr' && e.line === 'got args'));
  });

  test('a native skill is callable over MCP too', async () => {
    const r = await call(await connect(), 'system_info');
    assert.equal(r.isError, undefined);
    assert.equal(r.structuredContent?.os.platform, process.platform);
  });

  test('a result that is not an object comes back as text only', async () => {
    const r = await call(await connect(), 'list_args');
    assert.equal(r.isError, undefined);
    assert.equal(r.content[0]?.text, '[1,2,3]');
    assert.equal(r.structuredContent, undefined);
  });

  test('a skill that needs approval answers pending with the execution id, not an error', async () => {
    const c = await connect({ 'x-ongrid-persona': 'ops', 'x-ongrid-subject': 'agent-7' });
    const r = await call(c, 'restart_svc');
    assert.notEqual(r.isError, true);
    const id = r.structuredContent?.execution_id as string;
    assert.equal(r.structuredContent?.status, 'pending_approval');
    assert.equal(r.structuredContent?.approvals_required, 1);
    assert.match(r.content[0]?.text ?? '', new RegExp(`[Aa]pproval needed.*${id}`));
    const rec = (await t.app.inject(`/v1/executions/${id}`)).json();
    assert.equal(rec.status, 'pending_approval');
    assert.equal(rec.persona, 'ops');
  });

  test('a skill the persona may not run is isError with class_not_permitted, and nothing is recorded', async () => {
    const before = (await t.app.inject('/v1/executions?skill=wipe_disk')).json().total;
    const r = await call(await connect({ 'x-ongrid-persona': 'ops' }), 'wipe_disk');
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent?.error.code, 'class_not_permitted');
    assert.match(r.content[0]?.text ?? '', /^class_not_permitted: /);
    assert.equal((await t.app.inject('/v1/executions?skill=wipe_disk')).json().total, before);
  });

  test('invalid args and unknown tools are isError with invalid_args and skill_not_found', async () => {
    const c = await connect();
    const bad = await call(c, 'echo_args', { word: 5 });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent?.error.code, 'invalid_args');
    assert.deepEqual(bad.structuredContent?.error.details, [{ path: '/word', message: 'must be string' }]);
    const missing = await call(c, 'no_such_tool');
    assert.equal(missing.isError, true);
    assert.equal(missing.structuredContent?.error.code, 'skill_not_found');
  });

  test('a failed execution is isError with its code, message and execution id', async () => {
    const r = await call(await connect(), 'fails_hard');
    assert.equal(r.isError, true);
    const id = r.structuredContent?.execution_id as string;
    assert.equal(r.structuredContent?.status, 'failed');
    assert.equal(r.structuredContent?.error.code, 'exit_nonzero');
    assert.match(r.content[0]?.text ?? '', new RegExp(`${id}.*failed: exit_nonzero`));
    assert.equal((await t.app.inject(`/v1/executions/${id}`)).json().status, 'failed');
  });

  test('an unknown persona is refused with 400 unknown_persona before any MCP exchange', async () => {
    const r = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-ongrid-persona': 'nobody' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(r.status, 400);
    assert.equal(((await r.json()) as any).error.code, 'unknown_persona');
  });

  test('raw JSON-RPC: tools/list without initialize works (stateless) and no session id is issued', async () => {
    const r = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('mcp-session-id'), null);
    const body = (await r.json()) as any;
    assert.equal(body.id, 7);
    assert.ok(body.result.tools.some((x: { name: string }) => x.name === 'echo_args'));
  });

  test('GET and DELETE /mcp answer 405 with the error envelope', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(`${base}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.get('allow'), 'POST');
      assert.equal(((await r.json()) as any).error.code, 'method_not_allowed');
    }
  });

  test('none of the above logged an error or a transport warning', () => {
    const bad = t.logs.lines.filter((l) => l.level >= 40 && !l.msg.startsWith('skill loader:') && !l.msg.startsWith('persona loader:'));
    assert.deepEqual(bad.map((l) => l.msg), []);
  });
});

describe('MCP with auth on', () => {
  let t: TestApp;
  let base: string;
  let dir: string;
  before(async () => {
    dir = tempDir('ongrid-mcp-auth-');
    const tokens = path.join(dir, 'tokens.json');
    fs.writeFileSync(tokens, JSON.stringify([{ subject: 'alice', token_sha256: createHash('sha256').update('tok-alice').digest('hex') }]));
    t = await startApp({ ONGRID_API_TOKENS_FILE: tokens });
    base = await listen(t.app);
  });
  after(async () => {
    await t.close();
    for (const d of [dir, t.dataDir]) fs.rmSync(d, { recursive: true, force: true });
  });

  test('/mcp needs the bearer token (401 without), and the call is recorded as the token subject', async () => {
    const anon = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(anon.status, 401);
    assert.equal(((await anon.json()) as any).error.code, 'unauthorized');

    const client = new Client({ name: 'ongrid-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: 'Bearer tok-alice', 'x-ongrid-subject': 'mallory' } },
    });
    await client.connect(transport);
    try {
      const r = (await client.callTool({ name: 'system_info', arguments: {} })) as ToolResult;
      assert.equal(r.isError, undefined);
      const rec = (await t.app.inject({ url: `/v1/executions/${r._meta?.execution_id}`, headers: { authorization: 'Bearer tok-alice' } })).json();
      assert.equal(rec.requested_by, 'alice');
    } finally {
      await client.close();
    }
  });
});
