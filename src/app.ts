/**
 * buildApp wires the parts into one Fastify instance. It never listens: main.ts does, tests
 * use inject() or listen on port 0. The service answers while the initial load runs
 * (`/readyz` is 503 until `start()` has finished).
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { installJsonBodyParser, BODY_LIMIT_BYTES } from './http/body-parser.js';
import { installErrorHandlers } from './http/error-handler.js';
import { installAuth } from './http/auth-hook.js';
import { registerSchemas } from './http/schemas.js';
import { installSwagger } from './http/swagger.js';
import { opsRoutes } from './http/routes/ops.js';
import { skillsRoutes } from './http/routes/skills.js';
import { executionsRoutes } from './http/routes/executions.js';
import { personasRoutes } from './http/routes/personas.js';
import { toolsRoutes } from './http/routes/tools.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { loadNativeSkills } from './skills/native/load-native.js';
import { SkillRegistry } from './skills/registry.js';
import { loadAll, loaderErrorCount, parseRoots } from './skills/loader.js';
import { PersonaRegistry } from './policy/persona-registry.js';
import { watchPersonas } from './policy/persona-watcher.js';
import { watchSkills } from './skills/watcher.js';
import { loadTokensFile, TokenVerifier } from './policy/auth.js';
import { openSqliteStore } from './execution/sqlite-store.js';
import type { ExecutionStore } from './execution/store.js';
import { ExecutionQueue } from './execution/queue.js';
import { EventBus } from './execution/event-bus.js';
import { Executor } from './execution/executor.js';
import { Metrics } from './ops/metrics.js';
import { metricsRoutes } from './http/routes/metrics.js';

export interface AppState {
  ready: boolean;
  shuttingDown: boolean;
}

export interface Services {
  config: Config;
  logger: Logger;
  registry: SkillRegistry;
  personas: PersonaRegistry;
  store: ExecutionStore;
  queue: ExecutionQueue;
  bus: EventBus;
  executor: Executor;
  metrics: Metrics;
  state: AppState;
}

declare module 'fastify' {
  interface FastifyInstance {
    ongrid: Services;
  }
}

export interface OngridApp {
  app: FastifyInstance;
  services: Services;
  /** Initial load and recovery; resolves when the service is ready. */
  start(): Promise<void>;
  /** Graceful stop: no new executions, running ones finish, then watchers, HTTP and database close. */
  close(): Promise<void>;
}

/** How often pending approvals are checked against their TTL (CONTRACT: expired within 2 s). */
const EXPIRY_SWEEP_MS = 500;

export async function buildApp(config: Config, logger: Logger): Promise<OngridApp> {
  // Fail fast on a bad tokens file: auth must never silently turn off.
  const verifier = config.apiTokensFile ? new TokenVerifier(loadTokensFile(config.apiTokensFile)) : undefined;
  const registry = new SkillRegistry();
  const roots = parseRoots(config.skillsExternalDirs);
  const personaDirs = parseRoots(config.personasDirs);
  const personas = new PersonaRegistry(personaDirs, logger);
  const store = openSqliteStore(config.dataDir);
  const queue = new ExecutionQueue(config.maxConcurrentExecutions, config.maxQueuedExecutions);
  const bus = new EventBus();
  const state: AppState = { ready: false, shuttingDown: false };
  const metrics = new Metrics({
    skillsBySource: () => {
      const counts = { external: 0, native: 0 };
      for (const s of registry.list()) counts[s.source]++;
      return counts;
    },
    queueWaiting: () => queue.waiting,
    queueRunning: () => queue.running,
    loaderErrors: loaderErrorCount,
  });
  const executor = new Executor({
    registry,
    personas,
    store,
    queue,
    bus,
    logger,
    killGraceMs: config.killGraceMs,
    approvalTtlSeconds: config.approvalTtlSeconds,
    defaultPersona: config.defaultPersona,
    onFinished: (rec) => metrics.executionFinished(rec.skill, rec.status, rec.duration_ms),
  });
  const services: Services = { config, logger, registry, personas, store, queue, bus, executor, metrics, state };

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: false,
    // One access line per request (onResponse below) instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // No type coercion: `wait: "true"` is a 400, not a silent true.
    ajv: { customOptions: { allErrors: true, coerceTypes: false, removeAdditional: false } },
  });
  app.decorate('ongrid', services);

  installErrorHandlers(app);
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request completed',
    );
  });
  installAuth(app, verifier);
  installJsonBodyParser(app);
  registerSchemas(app);
  await installSwagger(app);
  await app.register(opsRoutes);
  await app.register(metricsRoutes, { metrics });
  await app.register(skillsRoutes);
  await app.register(executionsRoutes);
  await app.register(personasRoutes);
  await app.register(toolsRoutes);
  await app.register(mcpRoutes);

  let sweeper: NodeJS.Timeout | undefined;
  const watchers: Array<{ ready: Promise<void>; close(): Promise<void> }> = [];
  let started: Promise<void> | undefined;
  const start = () =>
    (started ??= (async () => {
      personas.reload();
      const interrupted = await executor.recover();
      if (interrupted > 0) logger.warn({ count: interrupted }, `marked ${interrupted} executions interrupted by the last stop`);
      await executor.expireDue();
      await loadNativeSkills(config.nativeSkillsDir, registry, logger);
      await loadAll(roots, registry, logger);
      if (config.skillsWatch) {
        watchers.push(watchSkills({ roots, registry, logger, pollMs: config.skillsWatchPollMs }));
        watchers.push(watchPersonas(personaDirs, personas, logger, config.skillsWatchPollMs));
        await Promise.all(watchers.map((w) => w.ready));
      }
      sweeper = setInterval(() => {
        executor.expireDue().catch((err: unknown) => logger.error({ err }, 'approval expiry sweep failed'));
      }, EXPIRY_SWEEP_MS);
      sweeper.unref();
      state.ready = true;
    })());

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      state.shuttingDown = true;
      await started?.catch(() => undefined);
      clearInterval(sweeper);
      await Promise.all(watchers.map((w) => w.close()));
      await executor.drain();
      await app.close();
      await store.close();
    })());

  return { app, services, start, close };
}
