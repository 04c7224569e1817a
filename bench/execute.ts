/**
 * What the service adds to running a skill: p50/p99 latency and executions/s of
 * POST /v1/skills/{name}/execute (wait: true) on a trivial `exec cat` skill, beside a bare Node
 * loop spawning the same child the same number of times at the same concurrency.
 *
 *   node --import tsx bench/execute.ts [--requests 2000] [--warmup 200] [--concurrency 1,8] [--slices 4]
 *
 * The service is the real app (buildApp + listen on 127.0.0.1, SQLite in a temp dir, pino at
 * info to /dev/null) in this process; the client is node:http with a keep-alive agent.
 * Targets: adds under 1 ms p50 over the bare spawn; keeps over 80% of its throughput at c=8.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '1,8' },
    slices: { type: 'string', default: '4' },
  },
});
const SLICES = Number(values.slices);
const REQUESTS = Number(values.requests);
const WARMUP = Number(values.warmup);
const LEVELS = values.concurrency.split(',').map(Number);

interface Stats {
  p50: number;
  p99: number;
  perSecond: number;
  failures: number;
  /** CPU time of this process (user + system, all its threads) per run, in ms. */
  cpuPerRun: number;
}

/** Raw figures of one or more runs of a case, merged before the percentiles are taken. */
interface Sample {
  latencies: number[];
  wallMs: number;
  cpuUs: number;
  failures: number;
}

/** Runs `op` `n` times with `c` callers in flight, adding latencies, wall and CPU time to `into`. */
async function run(n: number, c: number, op: () => Promise<boolean>, into: Sample): Promise<void> {
  let next = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        const s = performance.now();
        if (!(await op())) into.failures++;
        into.latencies.push(performance.now() - s);
      }
    }),
  );
  into.wallMs += performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  into.cpuUs += cpu.user + cpu.system;
}

function stats(s: Sample): Stats {
  const l = [...s.latencies].sort((a, b) => a - b);
  const pct = (p: number) => l[Math.min(l.length - 1, Math.floor((p / 100) * l.length))]!;
  return {
    p50: pct(50),
    p99: pct(99),
    perSecond: (l.length / s.wallMs) * 1000,
    failures: s.failures,
    cpuPerRun: s.cpuUs / 1000 / l.length,
  };
}

const empty = (): Sample => ({ latencies: [], wallMs: 0, cpuUs: 0, failures: 0 });

/**
 * Both cases in alternating slices (bare, service, bare, ...), so drift and noise from other
 * work on the machine fall on both alike rather than on whichever ran second.
 */
async function compare(c: number, slices: number): Promise<{ bare: Stats; svc: Stats }> {
  await run(WARMUP, c, bareSpawn, empty());
  await run(WARMUP, c, viaService, empty());
  const bare = empty();
  const svc = empty();
  const per = Math.ceil(REQUESTS / slices);
  for (let i = 0; i < slices; i++) {
    await run(per, c, bareSpawn, bare);
    await run(per, c, viaService, svc);
  }
  return { bare: stats(bare), svc: stats(svc) };
}

// --- the skill ---------------------------------------------------------------------------------

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-bench-skills-'));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-bench-data-'));
const packDir = path.join(root, 'cat');
fs.mkdirSync(packDir);
const entry = path.join(packDir, 'run.sh');
fs.writeFileSync(entry, '#!/bin/sh\nexec cat\n', { mode: 0o755 });
fs.writeFileSync(
  path.join(packDir, 'skill.json'),
  JSON.stringify({ name: 'cat', description: 'echoes its args', entry: 'run.sh', env_allow: ['PATH'] }),
);
const childEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const input = JSON.stringify({ hello: 'world' });

// --- bare: the same child, spawned the way the runner does it ----------------------------------

function bareSpawn(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(entry, [], { cwd: packDir, env: childEnv, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.resume();
    child.on('error', () => resolve(false));
    child.on('close', (code) => {
      try {
        JSON.parse(Buffer.concat(out).toString('utf8'));
        resolve(code === 0);
      } catch {
        resolve(false);
      }
    });
    child.stdin.end(input);
  });
}

// --- service -----------------------------------------------------------------------------------

const config = loadConfig({
  ONGRID_SKILLS_EXTERNAL_DIRS: root,
  ONGRID_DATA_DIR: dataDir,
  ONGRID_SKILLS_WATCH: 'false',
  ONGRID_MAX_CONCURRENT_EXECUTIONS: String(Math.max(...LEVELS)),
  ONGRID_MAX_QUEUED_EXECUTIONS: '64',
});
const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true }));
const service = await buildApp(config, logger);
await service.app.listen({ host: '127.0.0.1', port: 0 });
await service.start();
const port = (service.app.server.address() as { port: number }).port;
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const body = JSON.stringify({ args: { hello: 'world' } });

function viaService(): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/skills/cat/execute',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (b: Buffer) => chunks.push(b));
        res.on('end', () => {
          try {
            const rec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status?: string };
            resolve(res.statusCode === 200 && rec.status === 'succeeded');
          } catch {
            resolve(false);
          }
        });
      },
    );
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

// --- run ---------------------------------------------------------------------------------------

const fmt = (n: number, d = 2) => n.toFixed(d).padStart(8);
console.log(
  `node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(2)}, ` +
    `rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB, ${REQUESTS} runs per case in ${SLICES} alternating slices (+${WARMUP} warm-up)`,
);
console.log('case        c     p50 ms   p99 ms   exec/s  cpu ms/run  failures');
const summary: string[] = [];
try {
  for (const c of LEVELS) {
    const { bare, svc } = await compare(c, SLICES);
    for (const [name, s] of [['bare spawn', bare], ['service', svc]] as const) {
      console.log(
        `${name.padEnd(10)} ${String(c).padStart(2)} ${fmt(s.p50)} ${fmt(s.p99)} ${fmt(s.perSecond, 0)} ${fmt(s.cpuPerRun).padStart(11)} ${String(s.failures).padStart(9)}`,
      );
    }
    if (bare.failures + svc.failures > 0) process.exitCode = 1;
    summary.push(
      `c=${c}: service adds ${(svc.p50 - bare.p50).toFixed(2)} ms p50 (${(svc.p99 - bare.p99).toFixed(2)} ms p99), ` +
        `keeps ${((svc.perSecond / bare.perSecond) * 100).toFixed(1)}% of bare throughput`,
    );
  }
  console.log(summary.join('\n'));
} finally {
  agent.destroy();
  await service.close();
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
