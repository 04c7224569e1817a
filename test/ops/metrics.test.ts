import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { Metrics, type MetricsSources } from '../../src/ops/metrics.js';
import { metricsRoutes } from '../../src/http/routes/metrics.js';
import { installAuth } from '../../src/http/auth-hook.js';
import { installErrorHandlers } from '../../src/http/error-handler.js';
import { TokenVerifier, hashToken } from '../../src/policy/auth.js';
import { installSwagger } from '../../src/http/swagger.js';

/** Sources whose numbers the test can change between scrapes. */
function mutableSources() {
  const state = { external: 3, native: 1, waiting: 2, running: 5 };
  const sources: MetricsSources = {
    skillsBySource: () => ({ external: state.external, native: state.native }),
    queueWaiting: () => state.waiting,
    queueRunning: () => state.running,
  };
  return { state, sources };
}

async function appWith(metrics: Metrics, setup?: (app: FastifyInstance) => void | Promise<void>) {
  const app = Fastify();
  await setup?.(app);
  await app.register(metricsRoutes, { metrics });
  await app.ready();
  return app;
}

async function scrape(app: FastifyInstance) {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200, res.body);
  return res;
}

/** The value of one sample line `name{labels} value`, or undefined when the line is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  test('counts executions by skill and status', async () => {
    const metrics = new Metrics(mutableSources().sources);
    metrics.executionFinished('x', 'succeeded', 250);
    metrics.executionFinished('x', 'succeeded', 1500);
    metrics.executionFinished('x', 'failed', 40);
    metrics.executionFinished('y', 'rejected', null);
    const app = await appWith(metrics);
    try {
      const { body } = await scrape(app);
      assert.equal(sample(body, 'ongrid_skill_executions_total{skill="x",status="succeeded"}'), 2);
      assert.equal(sample(body, 'ongrid_skill_executions_total{skill="x",status="failed"}'), 1);
      assert.equal(sample(body, 'ongrid_skill_executions_total{skill="y",status="rejected"}'), 1);
    } finally {
      await app.close();
    }
  });

  test('duration histogram observes seconds and skips executions that never ran', async () => {
    const metrics = new Metrics(mutableSources().sources);
    metrics.executionFinished('x', 'succeeded', 250);
    metrics.executionFinished('x', 'succeeded', 1500);
    metrics.executionFinished('y', 'expired', null);
    const app = await appWith(metrics);
    try {
      const { body } = await scrape(app);
      assert.equal(sample(body, 'ongrid_skill_execution_duration_seconds_count{skill="x"}'), 2);
      assert.equal(sample(body, 'ongrid_skill_execution_duration_seconds_sum{skill="x"}'), 1.75);
      assert.equal(sample(body, 'ongrid_skill_execution_duration_seconds_bucket{le="0.5",skill="x"}'), 1);
      assert.equal(sample(body, 'ongrid_skill_execution_duration_seconds_bucket{le="300",skill="x"}'), 2);
      assert.equal(sample(body, 'ongrid_skill_execution_duration_seconds_bucket{le="0.01",skill="x"}'), 0);
      assert.equal(sample(body, 'ongrid_skill_execution_duration_seconds_count{skill="y"}'), undefined);
    } finally {
      await app.close();
    }
  });

  test('counts loader errors', async () => {
    const metrics = new Metrics(mutableSources().sources);
    const app = await appWith(metrics);
    try {
      assert.equal(sample((await scrape(app)).body, 'ongrid_skill_loader_errors_total'), 0);
      metrics.loaderError();
      metrics.loaderError();
      assert.equal(sample((await scrape(app)).body, 'ongrid_skill_loader_errors_total'), 2);
    } finally {
      await app.close();
    }
  });

  test('adds a loader error total kept elsewhere, read at each scrape', async () => {
    let external = 3;
    const metrics = new Metrics({ ...mutableSources().sources, loaderErrors: () => external });
    metrics.loaderError();
    const app = await appWith(metrics);
    try {
      assert.equal(sample((await scrape(app)).body, 'ongrid_skill_loader_errors_total'), 4);
      external = 5;
      assert.equal(sample((await scrape(app)).body, 'ongrid_skill_loader_errors_total'), 6);
    } finally {
      await app.close();
    }
  });

  test('gauges are read from the sources at each scrape', async () => {
    const { state, sources } = mutableSources();
    const app = await appWith(new Metrics(sources));
    try {
      let body = (await scrape(app)).body;
      assert.equal(sample(body, 'ongrid_skills_registered{source="external"}'), 3);
      assert.equal(sample(body, 'ongrid_skills_registered{source="native"}'), 1);
      assert.equal(sample(body, 'ongrid_execution_queue_depth'), 2);
      assert.equal(sample(body, 'ongrid_executions_running'), 5);

      Object.assign(state, { external: 0, native: 4, waiting: 0, running: 1 });
      body = (await scrape(app)).body;
      assert.equal(sample(body, 'ongrid_skills_registered{source="external"}'), 0);
      assert.equal(sample(body, 'ongrid_skills_registered{source="native"}'), 4);
      assert.equal(sample(body, 'ongrid_execution_queue_depth'), 0);
      assert.equal(sample(body, 'ongrid_executions_running'), 1);
    } finally {
      await app.close();
    }
  });

  test('answers Prometheus text with default process metrics', async () => {
    const app = await appWith(new Metrics(mutableSources().sources));
    try {
      const res = await scrape(app);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      assert.match(res.body, /^# TYPE ongrid_skill_executions_total counter$/m);
      assert.match(res.body, /^# TYPE ongrid_skill_execution_duration_seconds histogram$/m);
      assert.ok(sample(res.body, 'process_cpu_seconds_total') !== undefined, 'process_cpu_seconds_total missing');
      assert.ok(!res.body.startsWith('"'), 'body must not be JSON-encoded');
    } finally {
      await app.close();
    }
  });

  test('two Metrics in one process keep separate registries', async () => {
    const a = new Metrics(mutableSources().sources);
    const b = new Metrics(mutableSources().sources);
    a.executionFinished('x', 'succeeded', 10);
    const appA = await appWith(a);
    const appB = await appWith(b);
    try {
      assert.equal(sample((await scrape(appA)).body, 'ongrid_skill_executions_total{skill="x",status="succeeded"}'), 1);
      assert.equal(sample((await scrape(appB)).body, 'ongrid_skill_executions_total{skill="x",status="succeeded"}'), undefined);
    } finally {
      await appA.close();
      await appB.close();
    }
  });

  test('needs no token when auth is on', async () => {
    const verifier = new TokenVerifier([{ subject: 'alice', token_sha256: hashToken('secret-token') }]);
    const app = await appWith(new Metrics(mutableSources().sources), (a) => {
      installErrorHandlers(a);
      installAuth(a, verifier);
      a.get('/v1/probe', async () => ({ ok: true }));
    });
    try {
      // The guard is really on: a /v1 route without a token is refused.
      const guarded = await app.inject({ method: 'GET', url: '/v1/probe' });
      assert.equal(guarded.statusCode, 401);
      await scrape(app);
    } finally {
      await app.close();
    }
  });

  test('is documented in OpenAPI under the ops tag as plain text', async () => {
    const app = await appWith(new Metrics(mutableSources().sources), (a) => installSwagger(a));
    try {
      const doc = app.swagger() as { paths: Record<string, { get?: { tags?: string[]; responses?: Record<string, { content?: object }> } }> };
      const op = doc.paths['/metrics']?.get;
      assert.deepEqual(op?.tags, ['ops']);
      assert.ok(op?.responses?.['200']?.content && 'text/plain' in op.responses['200'].content);
    } finally {
      await app.close();
    }
  });
});
