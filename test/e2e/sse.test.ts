/**
 * GET /v1/executions/{id}/events as Server-Sent Events over a real listening socket
 * (CONTRACT sections 5 and 12): past then live events, `id:` = seq, Last-Event-ID, and the
 * stream ending after the final event.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';
import { listen, SseStream } from '../helpers/http.js';

interface Event {
  seq: number;
  at: string;
  type: string;
  line?: string;
}

const root = tempDir('ongrid-sse-skills-');
const gate = path.join(root, 'gated', 'go');
let t: TestApp;
let base: string;

before(async () => {
  // Writes a line, then holds until the test creates `go`: the rest can only arrive live.
  writeSkill(root, {
    name: 'gated',
    script: `echo before >&2\nwhile [ ! -e go ]; do sleep 0.02; done\necho after >&2\necho '{"ok": true}'`,
  });
  writeSkill(root, { name: 'chatty', script: `echo one >&2\necho two >&2\nprintf three >&2\necho '{}'` });
  t = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root });
  base = await listen(t.app);
});

after(async () => {
  await t.close();
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(t.dataDir, { recursive: true, force: true });
});

async function submit(name: string, wait: boolean): Promise<string> {
  const res = await fetch(`${base}/v1/skills/${name}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wait }),
  });
  return ((await res.json()) as { id: string }).id;
}

async function timeline(id: string): Promise<Event[]> {
  const res = await fetch(`${base}/v1/executions/${id}/events`);
  return ((await res.json()) as { items: Event[] }).items;
}

/** Every frame well-formed: `id` is the seq, `event` the type, `data` the Event itself. */
function assertFrames(s: SseStream): Event[] {
  const evs = s.events<Event>();
  s.frames.forEach((f, i) => {
    assert.equal(f.id, String(evs[i]!.seq));
    assert.equal(f.event, evs[i]!.type);
  });
  return evs;
}

describe('SSE', () => {
  test('streams past then live events with id/event/data and closes after the final event', async () => {
    fs.rmSync(gate, { force: true });
    const id = await submit('gated', false);
    await eventually(async () => (await timeline(id)).some((e) => e.line === 'before'), 10_000, 'the first line');

    const s = new SseStream(`${base}/v1/executions/${id}/events`);
    // The past arrives at once, including the line written before we connected...
    await s.waitFor((f) => f.event === 'stderr');
    assert.equal(s.status, 200);
    assert.match(String(s.headers['content-type']), /^text\/event-stream/);
    let closed = false;
    void s.closed.then(() => (closed = true));
    assert.equal(closed, false, 'still open while the execution runs');
    assert.ok(!s.frames.some((f) => f.event === 'exited'));

    // ...the rest only once the child is let go: live.
    fs.writeFileSync(gate, '');
    await s.closed;
    const evs = assertFrames(s);
    assert.deepEqual(
      evs.map((e) => e.type),
      ['created', 'queued', 'started', 'stderr', 'stderr', 'exited', 'succeeded'],
    );
    assert.deepEqual(
      evs.filter((e) => e.type === 'stderr').map((e) => e.line),
      ['before', 'after'],
    );
    // Exactly what the JSON timeline holds, nothing twice.
    assert.deepEqual(evs, await timeline(id));
  });

  test('a subscriber connected before the run starts sees every event once, in seq order', async () => {
    fs.rmSync(gate, { force: true });
    const id = await submit('gated', false);
    const s = new SseStream(`${base}/v1/executions/${id}/events`);
    await s.waitFor((f) => f.event === 'created');
    fs.writeFileSync(gate, '');
    await s.closed;
    const evs = assertFrames(s);
    assert.deepEqual(
      evs.map((e) => e.seq),
      evs.map((_, i) => i + 1),
    );
    assert.equal(evs.at(-1)!.type, 'succeeded');
  });

  test('Last-Event-ID: n replays only seq > n, then closes after the final event', async () => {
    const id = await submit('chatty', true);
    const all = await timeline(id);
    assert.equal(all.at(-1)!.type, 'succeeded');

    const s = new SseStream(`${base}/v1/executions/${id}/events`, { 'last-event-id': '3' });
    await s.closed;
    const evs = assertFrames(s);
    assert.deepEqual(evs, all.filter((e) => e.seq > 3));
    assert.deepEqual(
      evs.map((e) => e.line ?? e.type),
      ['one', 'two', 'three', 'exited', 'succeeded'],
    );

    // Everything already seen: the stream ends at once with nothing to send.
    const none = new SseStream(`${base}/v1/executions/${id}/events`, { 'last-event-id': String(all.at(-1)!.seq) });
    await none.closed;
    assert.equal(none.frames.length, 0);
  });

  test('an unknown execution answers 404 execution_not_found, not a stream', async () => {
    const res = await fetch(`${base}/v1/executions/00000000-0000-4000-8000-000000000000/events`, {
      headers: { accept: 'text/event-stream' },
    });
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'execution_not_found');
  });

  test('a client that goes away mid-stream does not disturb the run', async () => {
    fs.rmSync(gate, { force: true });
    const id = await submit('gated', false);
    const s = new SseStream(`${base}/v1/executions/${id}/events`);
    await s.waitFor((f) => f.event === 'started');
    s.abort();
    fs.writeFileSync(gate, '');
    await eventually(async () => (await timeline(id)).at(-1)?.type === 'succeeded', 10_000, 'the run to finish');
  });

  test('closing the service ends open streams, even on an execution waiting for approval', async () => {
    const packs = tempDir('ongrid-sse-pending-');
    const personas = tempDir('ongrid-sse-personas-');
    writeSkill(packs, { name: 'changer', script: `echo '{}'`, manifest: { class: 'mutating' } });
    fs.writeFileSync(
      path.join(personas, 'operator.md'),
      '---\nname: operator\ndescription: confirms mutations\npermission_mode: mutating-with-confirm\ntools: []\n---\n',
    );
    const own = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: packs, ONGRID_PERSONAS_DIRS: personas });
    try {
      const url = await listen(own.app);
      const res = await fetch(`${url}/v1/skills/changer/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-ongrid-persona': 'operator' },
        body: '{}',
      });
      assert.equal(res.status, 202);
      const { id, status } = (await res.json()) as { id: string; status: string };
      assert.equal(status, 'pending_approval');
      const s = new SseStream(`${url}/v1/executions/${id}/events`);
      await s.waitFor((f) => f.event === 'approval_requested');
      // Generous bound: without the fix close() waits for the stream forever.
      const closing = own.close();
      const outcome = await Promise.race([
        closing.then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('hung'), 10_000).unref()),
      ]);
      assert.equal(outcome, 'closed');
      await s.closed;
      assert.deepEqual(
        s.events<Event>().map((e) => e.type),
        ['created', 'approval_requested'],
      );
    } finally {
      await own.close();
      for (const d of [packs, personas, own.dataDir]) fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
