/**
 * Hot-reload benchmark.
 *
 *   node --import tsx bench/watch.ts [--writes 200] [--poll-ms 0]
 *                                    [--packs 5000] [--warmup-seconds 5] [--idle-seconds 10] [--idle-poll-ms 1000]
 *
 * 1. Latency: the time from a skill.json written (a new one, then an edit of it) to the
 *    registry listing it, i.e. what GET /v1/skills answers; median and p99 over --writes writes,
 *    one at a time with the watcher idle in between. Measured in-process with the real watcher
 *    and registry, through a registry change listener (no polling error in the figure).
 * 2. Idle cost: the CPU a child process uses with --packs packs loaded, not watched, watched
 *    natively and watched by polling (--idle-poll-ms, default 1000): first over the
 *    --warmup-seconds after `ready` (the watcher's catch-up walk re-reads every manifest once),
 *    then over --idle-seconds of idling; plus its RSS and its inotify watches.
 *    --writes 0 or --packs 0 skips a part.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadAll } from '../src/skills/loader.js';
import { SkillRegistry } from '../src/skills/registry.js';
import { watchSkills } from '../src/skills/watcher.js';

const { values: opts } = parseArgs({
  options: {
    writes: { type: 'string', default: '200' },
    packs: { type: 'string', default: '5000' },
    'idle-seconds': { type: 'string', default: '10' },
    'warmup-seconds': { type: 'string', default: '5' },
    'poll-ms': { type: 'string', default: '0' },
    'idle-poll-ms': { type: 'string', default: '1000' },
    'idle-child': { type: 'string' }, // internal: <root>
    'child-mode': { type: 'string' }, // internal: off | native | poll
  },
});

const silent = pino({ level: 'silent' });

function writePack(dir: string, name: string, description = 'bench'): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'skill.json'), JSON.stringify({ name, description, entry: 'run.sh' }));
}

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

function summary(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1).padStart(7);
  return `${f(percentile(s, 50))} ${f(percentile(s, 99))} ${f(s[s.length - 1] as number)}`;
}

// --- 1. latency ----------------------------------------------------------------------------

async function latency(writes: number, pollMs: number): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-bench-watch-'));
  try {
    // Pack folders and entries exist beforehand: the measured write is the manifest alone.
    for (let i = 0; i < writes; i++) {
      const dir = path.join(root, `p${i}`);
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
    }
    const registry = new SkillRegistry();
    await loadAll([root], registry, silent);
    const watcher = watchSkills({ roots: [root], registry, logger: silent, pollMs });
    await watcher.ready;

    const waitFor = (pred: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          off();
          reject(new Error('not listed within 10 s'));
        }, 10_000);
        const off = registry.onChange(() => {
          if (!pred()) return;
          clearTimeout(timer);
          off();
          resolve();
        });
      });

    // Between writes, let the watcher go idle: a read still pending from the previous write
    // would otherwise pick the next one up early and flatter the figures.
    const quiet = () => new Promise((r) => setTimeout(r, 150));
    const added: number[] = [];
    const edited: number[] = [];
    for (let i = 0; i < writes; i++) {
      await quiet();
      const manifest = path.join(root, `p${i}`, 'skill.json');
      const name = `bench_${i}`;
      let listed = waitFor(() => registry.get(name) !== undefined);
      let t0 = performance.now();
      fs.writeFileSync(manifest, JSON.stringify({ name, description: 'v1', entry: 'run.sh' }));
      await listed;
      added.push(performance.now() - t0);
      await quiet();

      listed = waitFor(() => registry.get(name)?.description === 'v2');
      t0 = performance.now();
      fs.writeFileSync(manifest, JSON.stringify({ name, description: 'v2', entry: 'run.sh' }));
      await listed;
      edited.push(performance.now() - t0);
    }
    await watcher.close();
    const mode = pollMs > 0 ? `polling ${pollMs} ms` : 'native events';
    console.log(`\nwrite -> listed latency, ${writes} writes each, ${mode} (ms)`);
    console.log('                      median     p99     max');
    console.log(`new skill.json       ${summary(added)}`);
    console.log(`edited skill.json    ${summary(edited)}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

// --- 2. idle cost --------------------------------------------------------------------------

/** utime + stime of a process, in ms (from /proc; Linux only). */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Counts inotify watches held by a process (one `inotify wd:` line per watch in fdinfo). */
function inotifyWatches(pid: number): number {
  let n = 0;
  for (const fd of fs.readdirSync(`/proc/${pid}/fdinfo`)) {
    try {
      n += (fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').match(/^inotify wd:/gm) ?? []).length;
    } catch {
      // fd closed meanwhile
    }
  }
  return n;
}

async function idleChild(root: string, mode: string, pollMs: number): Promise<void> {
  const registry = new SkillRegistry();
  await loadAll([root], registry, silent);
  if (mode !== 'off') {
    const watcher = watchSkills({ roots: [root], registry, logger: silent, pollMs: mode === 'poll' ? pollMs : 0 });
    await watcher.ready;
  }
  setInterval(() => {}, 1 << 30); // stay alive
  process.send?.({ ready: registry.size });
}

async function idle(packs: number, seconds: number, warmup: number, pollMs: number): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-bench-idle-'));
  try {
    for (let i = 0; i < packs; i++) writePack(path.join(root, `pack-${i}`), `idle_${i}`);
    console.log(`\nidle cost with ${packs} packs: CPU in the ${warmup} s after ready (settling), then over ${seconds} s idle`);
    console.log('mode                  ready_s  settling_cpu_ms  idle_cpu_ms  idle_cpu_%_of_core  rss_MiB  inotify_watches');
    for (const mode of ['off', 'native', 'poll']) {
      const t0 = performance.now();
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', import.meta.filename, '--idle-child', root, '--child-mode', mode, '--idle-poll-ms', String(pollMs)],
        { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
      );
      const registered = await new Promise<number>((resolve, reject) => {
        child.once('message', (m: { ready: number }) => resolve(m.ready));
        child.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
      });
      const readyS = (performance.now() - t0) / 1000;
      if (registered !== packs) throw new Error(`child registered ${registered} of ${packs}`);
      const pid = child.pid as number;
      const cReady = cpuMs(pid);
      await new Promise((r) => setTimeout(r, warmup * 1000));
      const c0 = cpuMs(pid);
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const used = cpuMs(pid) - c0;
      const label = mode === 'poll' ? `polling ${pollMs} ms` : mode === 'native' ? 'native events' : 'watch off';
      console.log(
        `${label.padEnd(20)} ${readyS.toFixed(1).padStart(8)} ${(c0 - cReady).toFixed(0).padStart(16)} ${used.toFixed(0).padStart(12)} ${((used / (seconds * 1000)) * 100).toFixed(2).padStart(19)} ${rssMiB(pid).toFixed(0).padStart(8)} ${String(inotifyWatches(pid)).padStart(16)}`,
      );
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

if (opts['idle-child'] !== undefined) {
  await idleChild(opts['idle-child'], opts['child-mode'] ?? 'native', Number(opts['idle-poll-ms']));
} else {
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, ${os.platform()} ${os.release()}`);
  if (Number(opts.writes) > 0) await latency(Number(opts.writes), Number(opts['poll-ms']));
  if (Number(opts.packs) > 0) await idle(Number(opts.packs), Number(opts['idle-seconds']), Number(opts['warmup-seconds']), Number(opts['idle-poll-ms']));
}
