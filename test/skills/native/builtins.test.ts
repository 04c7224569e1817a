import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BUILTINS, resolveBuiltin } from '../../../src/skills/native/builtins.js';
import { httpProbe } from '../../../src/skills/native/builtins/http-probe.js';
import { makeQueryPromql, queryUrl } from '../../../src/skills/native/builtins/query-promql.js';
import type { NativeContext } from '../../../src/skills/types.js';

function context(signal = new AbortController().signal): NativeContext & { lines: string[] } {
  const lines: string[] = [];
  return { signal, lines, log: (l: string) => lines.push(l) };
}

/** A real HTTP server on loopback; `handler` decides per request. */
async function serve(handler: http.RequestListener): Promise<{ url: string; server: http.Server; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type Probe = Record<string, any>;
const probe = (args: Record<string, unknown>, ctx = context()) => httpProbe(args, ctx) as Promise<Probe>;

describe('builtin table', () => {
  test('names resolve to implementations; unknown names do not', () => {
    assert.deepEqual(Object.keys(BUILTINS).sort(), ['builtin:http.Probe', 'builtin:prometheus.InstantQuery', 'builtin:system.SystemInfo']);
    assert.equal(typeof resolveBuiltin('builtin:http.Probe', {}), 'function');
    assert.equal(resolveBuiltin('builtin:http.Nope', {}), undefined);
    assert.equal(resolveBuiltin('builtin:constructor.x', {}), undefined);
    assert.equal(resolveBuiltin('toString', {}), undefined);
  });
});

describe('http_probe', () => {
  let target: Awaited<ReturnType<typeof serve>>;
  const hanging = new Set<http.ServerResponse>();
  before(async () => {
    target = await serve((req, res) => {
      switch (req.url) {
        case '/ok':
          res.writeHead(200, { 'content-type': 'text/plain', server: 'probe-target', 'x-secret': 'not selected' });
          res.end('hello probe');
          return;
        case '/moved':
          res.writeHead(302, { location: '/ok' });
          res.end();
          return;
        case '/big': {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          let sent = 0;
          const pump = () => {
            while (sent < 5 * 1024 * 1024) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
          };
          res.on('error', () => {});
          pump();
          return;
        }
        case '/hang':
          hanging.add(res); // never answers
          return;
        default:
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end('{"error":"nope"}');
      }
    });
  });
  after(() => target.close());

  test('reports status, latency, selected headers and a text preview of the body', async () => {
    const ctx = context();
    const r = await probe({ url: `${target.url}/ok` }, ctx);
    assert.equal(r.reachable, true);
    assert.equal(r.status, 200);
    assert.equal(r.ok, true);
    assert.equal(r.method, 'GET');
    assert.ok(Number.isInteger(r.latency_ms) && r.latency_ms >= 0);
    assert.equal(r.headers['content-type'], 'text/plain');
    assert.equal(r.headers.server, 'probe-target');
    assert.equal('x-secret' in r.headers, false, 'only selected headers');
    assert.equal(r.body_bytes, 11);
    assert.equal(r.body_truncated, false);
    assert.equal(r.body_preview, 'hello probe');
    assert.deepEqual(ctx.lines, [`GET ${target.url}/ok`]);
  });

  test('a non-2xx answer is a reachable probe with ok=false', async () => {
    const r = await probe({ url: `${target.url}/missing` });
    assert.equal(r.reachable, true);
    assert.equal(r.status, 404);
    assert.equal(r.ok, false);
  });

  test('redirects are reported, not followed, unless follow_redirects is true', async () => {
    const moved = await probe({ url: `${target.url}/moved` });
    assert.equal(moved.status, 302);
    assert.equal(moved.headers.location, '/ok');
    const followed = await probe({ url: `${target.url}/moved`, follow_redirects: true });
    assert.equal(followed.status, 200);
    assert.equal(followed.final_url, `${target.url}/ok`);
  });

  test('HEAD reads no body', async () => {
    const r = await probe({ url: `${target.url}/ok`, method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.body_bytes, 0);
    assert.equal('body_preview' in r, false);
  });

  test('the body is read only up to max_body_bytes, and a binary body has no preview', async () => {
    const r = await probe({ url: `${target.url}/big`, max_body_bytes: 1000 });
    assert.equal(r.body_bytes, 1000);
    assert.equal(r.body_truncated, true);
    assert.equal('body_preview' in r, false);
  });

  test('a refused connection is reachable=false with the reason, not a failure', async () => {
    const gone = await serve(() => {});
    await gone.close();
    const r = await probe({ url: gone.url });
    assert.equal(r.reachable, false);
    assert.match(r.error, /ECONNREFUSED/);
  });

  test('a target that never answers is reachable=false after timeout_ms', async () => {
    const t0 = Date.now();
    const r = await probe({ url: `${target.url}/hang`, timeout_ms: 150 });
    assert.equal(r.reachable, false);
    assert.equal(r.error, 'no response within 150 ms');
    assert.ok(Date.now() - t0 < 10_000, 'did not hang');
  });

  test('aborting the execution signal aborts the request', async () => {
    const ac = new AbortController();
    const p = probe({ url: `${target.url}/hang`, timeout_ms: 60_000 }, context(ac.signal));
    setTimeout(() => ac.abort(new Error('cancelled')), 50);
    await assert.rejects(p, /aborted/);
  });

  test('anything but an absolute http(s) URL without credentials is refused', async () => {
    await assert.rejects(probe({ url: 'file:///etc/passwd' }), /http\(s\) URL/);
    await assert.rejects(probe({ url: 'not a url' }), /http\(s\) URL/);
    await assert.rejects(probe({ url: 'http://user:pw@127.0.0.1/' }), /credentials/);
  });
});

describe('query_promql', () => {
  let prom: Awaited<ReturnType<typeof serve>>;
  const seen: string[] = [];
  before(async () => {
    prom = await serve((req, res) => {
      seen.push(req.url ?? '');
      const u = new URL(req.url ?? '/', 'http://x');
      res.setHeader('content-type', 'application/json');
      if (u.pathname !== '/prefix/api/v1/query') {
        res.writeHead(404).end('{}');
      } else if (u.searchParams.get('query') === 'bad(') {
        res.writeHead(400).end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error: unclosed left parenthesis' }));
      } else {
        res.end(
          JSON.stringify({
            status: 'success',
            data: { resultType: 'vector', result: [{ metric: { job: 'api' }, value: [1700000000, '1'] }] },
            warnings: ['partial data'],
          }),
        );
      }
    });
  });
  after(() => prom.close());

  test('builds /api/v1/query under the base URL, keeping a path prefix', () => {
    assert.equal(queryUrl('http://p:9090', 'up').href, 'http://p:9090/api/v1/query?query=up');
    assert.equal(queryUrl('http://p/prom/', 'a b', '123').href, 'http://p/prom/api/v1/query?query=a+b&time=123');
  });

  test('answers the result type and result of an instant query, warnings as log lines', async () => {
    const run = makeQueryPromql({ ONGRID_PROMETHEUS_URL: `${prom.url}/prefix` });
    const ctx = context();
    const r = (await run({ query: 'up{job="api"}', time: '1700000000' }, ctx)) as Record<string, any>;
    assert.equal(r.result_type, 'vector');
    assert.deepEqual(r.result, [{ metric: { job: 'api' }, value: [1700000000, '1'] }]);
    assert.equal(r.series, 1);
    assert.deepEqual(r.warnings, ['partial data']);
    assert.ok(ctx.lines.includes('warning: partial data'));
    const last = new URL(seen.at(-1) ?? '', 'http://x');
    assert.equal(last.searchParams.get('query'), 'up{job="api"}');
    assert.equal(last.searchParams.get('time'), '1700000000');
  });

  test('a query Prometheus rejects fails with its error type and message', async () => {
    const run = makeQueryPromql({ ONGRID_PROMETHEUS_URL: `${prom.url}/prefix` });
    await assert.rejects(run({ query: 'bad(' }, context()), /bad_data.*unclosed left parenthesis/);
  });

  test('an unset URL or an unreachable server fails with a clear message', async () => {
    await assert.rejects(makeQueryPromql({})({ query: 'up' }, context()), /ONGRID_PROMETHEUS_URL is not set/);
    const gone = await serve(() => {});
    await gone.close();
    await assert.rejects(makeQueryPromql({ ONGRID_PROMETHEUS_URL: gone.url })({ query: 'up' }, context()), /prometheus unreachable: ECONNREFUSED/);
  });
});
