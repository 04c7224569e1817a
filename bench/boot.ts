/**
 * Boot benchmark: the real service (`node --import tsx src/main.ts`) on --manifests generated
 * skill packs (each a tiny sh entry), with the watcher off and on.
 *
 *   node --import tsx bench/boot.ts [--manifests 1000] [--runs 3]
 *
 * Per run: time from spawning the process to the first HTTP answer (listening) and to
 * GET /readyz = 200 (initial load done, watchers ready), then the process's RSS. The table
 * shows the median of --runs runs for each mode.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const PROJECT_ROOT = path.resolve(import.meta.dirname, '..');

const { values: opts } = parseArgs({
  options: {
    manifests: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
  },
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface Run {
  listeningMs: number;
  readyMs: number;
  rssMiB: number;
  skills: number;
}

async function bootOnce(root: string, watch: boolean): Promise<Run> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-bench-data-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ONGRID_SKILLS_EXTERNAL_DIRS: root,
      ONGRID_DATA_DIR: dataDir,
      ONGRID_HTTP_HOST: '127.0.0.1',
      ONGRID_HTTP_PORT: String(port),
      ONGRID_SKILLS_WATCH: String(watch),
      ONGRID_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    let listeningMs: number | undefined;
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (exited) throw new Error(`service exited during boot: ${stderr.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error('service not ready within 120 s');
      const res = await fetch(`${base}/readyz`).catch(() => undefined);
      if (res) {
        listeningMs ??= performance.now() - t0;
        await res.arrayBuffer();
        if (res.status === 200) break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const readyMs = performance.now() - t0;
    const rss = rssMiB(child.pid as number);
    const list = (await (await fetch(`${base}/v1/skills?source=external`)).json()) as { total: number };
    return { listeningMs: listeningMs as number, readyMs, rssMiB: rss, skills: list.total };
  } finally {
    child.kill('SIGKILL');
    if (!exited) await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const manifests = Number(opts.manifests);
const runs = Number(opts.runs);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-bench-boot-'));
try {
  for (let i = 0; i < manifests; i++) {
    const dir = path.join(root, `pack-${String(i).padStart(4, '0')}`);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify({ name: `boot_${i}`, description: 'boot bench', entry: 'run.sh' }));
  }
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, ${os.platform()} ${os.release()}`);
  console.log(`boot with ${manifests} manifests, median of ${runs} runs`);
  console.log('ONGRID_SKILLS_WATCH  listening_ms  readyz_200_ms  rss_after_load_MiB  skills');
  for (const watch of [false, true]) {
    const results: Run[] = [];
    for (let r = 0; r < runs; r++) results.push(await bootOnce(root, watch));
    const skills = results.map((x) => x.skills);
    if (skills.some((n) => n !== manifests)) throw new Error(`expected ${manifests} skills, got ${skills.join(', ')}`);
    console.log(
      `${String(watch).padEnd(19)} ${median(results.map((x) => x.listeningMs)).toFixed(0).padStart(13)} ${median(results.map((x) => x.readyMs)).toFixed(0).padStart(14)} ${median(results.map((x) => x.rssMiB)).toFixed(0).padStart(19)} ${String(manifests).padStart(7)}`,
    );
  }
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
