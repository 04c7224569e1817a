/**
 * HTTP-level helpers for end-to-end tests: a listening app, an SSE reader over a real socket,
 * the real service as a child process, and checks that a process is really gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { eventually } from './app.js';

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Listens on an ephemeral loopback port and returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${addr.port}`;
}

// --- SSE ---------------------------------------------------------------------------------------

export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/**
 * An open text/event-stream response, parsed as it arrives (the WHATWG rules that matter here:
 * `field: value` lines, blank line ends a frame, `:` lines are comments).
 */
export class SseStream {
  readonly frames: SseFrame[] = [];
  comments = 0;
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** Resolves when the server ends the stream. */
  readonly closed: Promise<void>;
  private req: http.ClientRequest | undefined;
  private listeners: Array<() => void> = [];
  private ended = false;

  constructor(url: string, headers: Record<string, string> = {}) {
    this.closed = new Promise<void>((resolve, reject) => {
      this.req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        res.setEncoding('utf8');
        let buf = '';
        let cur: Partial<SseFrame> & { data?: string } = {};
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) !== -1) {
            const line = buf.slice(0, nl).replace(/\r$/, '');
            buf = buf.slice(nl + 1);
            if (line === '') {
              if (cur.data !== undefined) this.frames.push({ ...cur, data: cur.data });
              cur = {};
              this.notify();
            } else if (line.startsWith(':')) {
              this.comments++;
            } else {
              const i = line.indexOf(':');
              const field = i === -1 ? line : line.slice(0, i);
              const value = i === -1 ? '' : line.slice(i + 1).replace(/^ /, '');
              if (field === 'data') cur.data = cur.data === undefined ? value : `${cur.data}\n${value}`;
              else if (field === 'id') cur.id = value;
              else if (field === 'event') cur.event = value;
            }
          }
        });
        res.on('end', () => {
          this.ended = true;
          this.notify();
          resolve();
        });
        res.on('error', reject);
      });
      this.req.on('error', reject);
    });
    // A test that fails before awaiting `closed` must not also leave an unhandled rejection.
    this.closed.catch(() => {});
  }

  /** The parsed `data` of every frame so far. */
  events<T = Record<string, unknown>>(): T[] {
    return this.frames.map((f) => JSON.parse(f.data) as T);
  }

  /** Resolves once a frame matching `pred` arrived; rejects at the deadline or if the stream ends first. */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs = 10_000): Promise<SseFrame> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hit = this.frames.find(pred);
        if (hit) {
          done();
          resolve(hit);
          return true;
        }
        if (this.ended) {
          done();
          reject(new Error('stream ended before the expected frame'));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error('timed out waiting for an SSE frame'));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
      };
      const listener = () => void check();
      if (!check()) this.listeners.push(listener);
    });
  }

  /** Drops the connection (client side). */
  abort(): void {
    this.req?.destroy();
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }
}

// --- the real service as a child process -------------------------------------------------------

export interface ServiceProcess {
  child: ChildProcess;
  /** Base URL once it listens. */
  url: string;
  /** Parsed JSON log lines so far (stdout), and raw stderr. */
  logs: Array<Record<string, unknown>>;
  stderr(): string;
  /** Resolves with the exit code / signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node --import tsx src/main.ts` with exactly `env` (plus PATH and HOME) on an ephemeral
 * port and waits until it listens and `/readyz` answers 200.
 */
export async function spawnService(env: Record<string, string>, readyTimeoutMs = 30_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ONGRID_HTTP_HOST: '127.0.0.1',
      ONGRID_HTTP_PORT: '0',
      ONGRID_SKILLS_WATCH: 'false',
      ONGRID_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let err = '';
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    let nl: number;
    while ((nl = out.indexOf('\n')) !== -1) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ msg: line });
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));

  try {
    const url = await eventually(
      () => {
        if (gone) throw new Error(`service exited during start: ${err.slice(-2000)}`);
        const hit = logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('Server listening at http://127.0.0.1:'));
        return hit ? (hit.msg as string).slice('Server listening at '.length) : '';
      },
      readyTimeoutMs,
      'the service to listen',
    );
    await eventually(
      async () => {
        if (gone) throw new Error(`service exited during start: ${err.slice(-2000)}`);
        const res = await fetch(`${url}/readyz`).catch(() => undefined);
        return res?.status === 200;
      },
      readyTimeoutMs,
      'the service to be ready',
    );
    return { child, url, logs, stderr: () => err, exited };
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopService(svc: ServiceProcess, graceMs = 10_000): Promise<void> {
  if (svc.child.exitCode !== null || svc.child.signalCode !== null) return;
  svc.child.kill('SIGTERM');
  const timer = setTimeout(() => svc.child.kill('SIGKILL'), graceMs);
  await svc.exited;
  clearTimeout(timer);
}

// --- processes ---------------------------------------------------------------------------------

/** True when no process with this pid exists any more (a zombie counts as gone: it runs nothing). */
export function processGone(pid: number): boolean {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  return state === 'Z' || state === 'X';
}

/** Reads a pid a test script wrote to `file` (waiting for it to appear). */
export async function readPid(file: string, timeoutMs = 10_000): Promise<number> {
  const text = await eventually(
    () => {
      try {
        const t = fs.readFileSync(file, 'utf8').trim();
        return /^\d+$/.test(t) ? t : '';
      } catch {
        return '';
      }
    },
    timeoutMs,
    `pid file ${file}`,
  );
  return Number(text);
}

/** Best-effort SIGKILL of a process group a test left behind (cleanup only). */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // already gone
  }
}
