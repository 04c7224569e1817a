/**
 * Runs one external skill as a subprocess (CONTRACT section 5 items 3-5, section 12).
 *
 * The child gets no arguments, exactly the given environment, its own process group and the
 * input on stdin. stdout is collected up to a cap; stderr is split into lines (capped, cut)
 * and streamed to the caller. A skill's lifetime is its entry process: once the entry exits
 * (or we kill it) the whole group gets SIGTERM, then SIGKILL after the grace, and the pipes are
 * read until EOF or the grace ends. The promise never rejects.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

export interface RunLimits {
  /** 16 MiB by contract; one byte over -> group killed, outcome output_too_large. */
  maxStdoutBytes: number;
  /** Lines emitted per execution; later lines are dropped (and counted). */
  maxStderrLines: number;
  /** Bytes emitted per execution; later lines are dropped (and counted). */
  maxStderrBytes: number;
  /** Longer lines are cut to this many bytes and get a truncation marker. */
  maxLineBytes: number;
  /** Last bytes of raw stderr always kept, for error envelopes. */
  tailBytes: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = Object.freeze({
  maxStdoutBytes: 16 * 1024 * 1024,
  maxStderrLines: 10_000,
  maxStderrBytes: 4 * 1024 * 1024,
  maxLineBytes: 16 * 1024,
  tailBytes: 4096,
});

export interface RunRequest {
  /** Absolute entry path as resolved by the loader (symlinks not resolved). */
  entry: string;
  /** Realpath of the allow-list root. */
  rootReal: string;
  /** The manifest's folder. */
  cwd: string;
  /** The COMPLETE environment of the child (nothing added, not even PATH). */
  env: Record<string, string>;
  /** Written to stdin, then stdin is closed. */
  input: string;
  timeoutMs: number;
  killGraceMs: number;
  limits?: Partial<RunLimits>;
  /** Called in order, for each emitted line. */
  onStderrLine(line: string): void;
  /** Called right after a successful spawn. */
  onStart?(pid: number): void;
  /** Abort = cancel: kill the group. */
  signal?: AbortSignal;
}

export type RunOutcome =
  | 'exited'
  | 'signaled'
  | 'timed_out'
  | 'output_too_large'
  | 'cancelled'
  | 'spawn_failed';

export interface RunResult {
  outcome: RunOutcome;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** UTF-8 decoded (invalid bytes become U+FFFD); '' when the cap was exceeded. */
  stdout: string;
  /** Last tailBytes of stderr, decoded. */
  stderrTail: string;
  /** Whole lines not emitted because a cap was reached, and their bytes. */
  stderrLinesDropped: number;
  stderrBytesDropped: number;
  /** Human reason, e.g. for spawn_failed. */
  message?: string;
  durationMs: number;
}

export type EntryCheck = { ok: true; real: string } | { ok: false; message: string };

/**
 * Re-checks an entry right before it runs: it exists, its realpath lies strictly inside
 * rootReal, and it is an executable regular file. Never throws.
 */
export async function checkEntry(entry: string, rootReal: string): Promise<EntryCheck> {
  let real: string;
  try {
    real = await realpath(entry);
  } catch {
    return { ok: false, message: `entry not found: ${entry}` };
  }
  if (!isStrictlyInside(real, rootReal)) {
    return { ok: false, message: `entry resolves outside its root: ${real} is not inside ${rootReal}` };
  }
  try {
    if (!(await stat(real)).isFile()) {
      return { ok: false, message: `entry is not a regular file: ${real}` };
    }
    await access(real, fsConstants.X_OK);
  } catch {
    return { ok: false, message: `entry is not executable: ${real}` };
  }
  return { ok: true, real };
}

function isStrictlyInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** Runs the entry to completion; see the module comment. Never rejects. */
export async function runSubprocess(req: RunRequest): Promise<RunResult> {
  const startedAt = performance.now();
  const limits: RunLimits = { ...DEFAULT_RUN_LIMITS, ...req.limits };
  const failed = (outcome: RunOutcome, message: string): RunResult => ({
    outcome,
    exitCode: null,
    signal: null,
    stdout: '',
    stderrTail: '',
    stderrLinesDropped: 0,
    stderrBytesDropped: 0,
    message,
    durationMs: Math.round(performance.now() - startedAt),
  });

  if (req.signal?.aborted) return failed('cancelled', 'cancelled before start');
  const check = await checkEntry(req.entry, req.rootReal);
  if (!check.ok) return failed('spawn_failed', check.message);
  if (req.signal?.aborted) return failed('cancelled', 'cancelled before start');

  let child: ChildProcess;
  try {
    // The checked realpath is spawned, narrowing the window for a swap between check and exec.
    child = spawn(check.real, [], {
      cwd: req.cwd,
      env: req.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (err) {
    return failed('spawn_failed', `cannot start ${check.real}: ${errorCode(err)}`);
  }
  return new Promise<RunResult>((resolve) => {
    new Supervisor(child, req, limits, startedAt, resolve).start();
  });
}

type Reason = 'timed_out' | 'cancelled' | 'output_too_large';

/** Owns one child from spawn to result: the timers, the kill sequence and the pipes. */
class Supervisor {
  private readonly stderr: StderrLines;
  private stdoutChunks: Buffer[] = [];
  private stdoutBytes = 0;
  private stdoutDone = false;
  private stderrDone = false;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** Why we killed the group before the entry exited on its own, if we did. */
  private reason: Reason | null = null;
  private spawnError: string | null = null;
  private finished = false;
  private pid: number | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private fallbackTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.kill('cancelled', 'SIGTERM');

  constructor(
    private readonly child: ChildProcess,
    private readonly req: RunRequest,
    private readonly limits: RunLimits,
    private readonly startedAt: number,
    private readonly resolve: (r: RunResult) => void,
  ) {
    this.stderr = new StderrLines(limits, req.onStderrLine);
  }

  start(): void {
    const { child, req } = this;
    child.on('error', (err) => {
      // Before a pid exists this is a failed spawn (ENOENT, EACCES, ENOEXEC...).
      if (this.pid === undefined) {
        this.spawnError = `cannot start ${child.spawnfile}: ${errorCode(err)}`;
        this.finish();
      }
    });
    child.on('exit', (code, signal) => this.onEntryExit(code, signal));

    const { stdin, stdout, stderr } = child;
    // A child that exits without reading its input makes the write fail with EPIPE: harmless.
    stdin?.on('error', () => {});
    stdout?.on('error', () => {});
    stderr?.on('error', () => {});
    stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
    stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    this.stdoutDone = !stdout;
    this.stderrDone = !stderr;
    stdout?.on('close', () => {
      this.stdoutDone = true;
      this.maybeFinish();
    });
    stderr?.on('close', () => {
      this.stderrDone = true;
      this.maybeFinish();
    });

    if (child.pid === undefined) return; // the 'error' event follows
    this.pid = child.pid;
    stdin?.end(req.input);
    this.timeoutTimer = setTimeout(() => this.kill('timed_out', 'SIGTERM'), req.timeoutMs);
    req.signal?.addEventListener('abort', this.onAbort, { once: true });
    try {
      req.onStart?.(child.pid);
    } catch {
      // A caller's hook must not break the run.
    }
  }

  private onStdout(chunk: Buffer): void {
    if (this.reason === 'output_too_large') return;
    if (this.stdoutBytes + chunk.length > this.limits.maxStdoutBytes) {
      this.stdoutChunks = [];
      this.reason = 'output_too_large';
      this.child.stdout?.destroy();
      this.beginKill('SIGKILL'); // nothing useful can come of it any more
      return;
    }
    this.stdoutChunks.push(chunk);
    this.stdoutBytes += chunk.length;
  }

  /** Timeout or cancel: only while the entry is still running, and only the first reason counts. */
  private kill(reason: Reason, sig: NodeJS.Signals): void {
    if (this.exit || this.finished || this.reason) return;
    this.reason = reason;
    this.beginKill(sig);
  }

  /** Signals the group and starts the grace (once; it counts from the first kill). */
  private beginKill(sig: NodeJS.Signals): void {
    clearTimeout(this.timeoutTimer);
    this.signalGroup(sig);
    this.graceTimer ??= setTimeout(() => this.onGraceEnd(), this.req.killGraceMs);
  }

  private onEntryExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exit || this.finished) return;
    this.exit = { code, signal };
    clearTimeout(this.timeoutTimer);
    this.req.signal?.removeEventListener('abort', this.onAbort);
    // The entry is gone; whatever it started in its group goes with it.
    this.beginKill('SIGTERM');
    this.maybeFinish();
  }

  private onGraceEnd(): void {
    this.signalGroup('SIGKILL');
    // Stop waiting for EOF: a process outside the group may hold the pipes forever.
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    this.stdoutDone = this.stderrDone = true;
    if (this.exit) {
      this.finish();
      return;
    }
    // SIGKILL ends the entry at once unless it is stuck in the kernel; never wait long for it.
    this.fallbackTimer = setTimeout(() => this.finish(), 1000);
  }

  /** Ends as soon as the entry exited, the pipes hit EOF and nothing of the group is left. */
  private maybeFinish(): void {
    if (this.finished || !this.exit || !this.stdoutDone || !this.stderrDone) return;
    if (this.polling) return;
    this.polling = true;
    const poll = async () => {
      const alive = this.pid !== undefined && (await groupAlive(this.pid));
      if (this.finished) return;
      if (!alive) this.finish();
      else this.pollTimer = setTimeout(poll, 25); // the grace timer ends it at the latest
    };
    // First check at once: a timer here would add >= 1 ms to every execution.
    void poll();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    for (const t of [this.timeoutTimer, this.graceTimer, this.fallbackTimer, this.pollTimer]) {
      clearTimeout(t);
    }
    this.req.signal?.removeEventListener('abort', this.onAbort);
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    this.stderr.end();

    const exit = this.exit;
    const outcome: RunOutcome = this.spawnError
      ? 'spawn_failed'
      : this.reason ?? (exit?.code != null ? 'exited' : 'signaled');
    const result: RunResult = {
      outcome,
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stdout:
        outcome === 'output_too_large' ? '' : Buffer.concat(this.stdoutChunks).toString('utf8'),
      stderrTail: this.stderr.tail(),
      stderrLinesDropped: this.stderr.linesDropped,
      stderrBytesDropped: this.stderr.bytesDropped,
      durationMs: Math.round(performance.now() - this.startedAt),
    };
    const message = this.spawnError ?? describe(outcome, result, this.req, this.limits);
    if (message) result.message = message;
    this.stdoutChunks = [];
    this.resolve(result);
  }

  private signalGroup(sig: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    try {
      process.kill(-this.pid, sig);
    } catch {
      // ESRCH: the group is already gone.
    }
  }
}

function describe(outcome: RunOutcome, r: RunResult, req: RunRequest, limits: RunLimits): string | undefined {
  switch (outcome) {
    case 'exited':
      return r.exitCode === 0 ? undefined : `the skill exited with code ${r.exitCode}`;
    case 'signaled':
      return `the skill was killed by ${r.signal ?? 'a signal'}`;
    case 'timed_out':
      return `the skill did not finish within ${req.timeoutMs} ms`;
    case 'output_too_large':
      return `the skill wrote more than ${limits.maxStdoutBytes} bytes to stdout`;
    case 'cancelled':
      return 'the execution was cancelled';
    default:
      return undefined;
  }
}

function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}

/**
 * Whether any live process remains in the group. kill(-pgid, 0) also counts zombies (orphans
 * wait for init to reap them), so on Linux /proc is consulted to skip those.
 */
async function groupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  let names: string[];
  try {
    names = await readdir('/proc');
  } catch {
    return true; // no /proc: trust kill(0)
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // vanished meanwhile
    }
    // "pid (comm) state ppid pgrp ..." where comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/**
 * Splits stderr into lines at the byte level ('\n' never occurs inside a UTF-8 sequence, so
 * each line decodes on its own), cuts long lines without buffering them, applies the
 * per-execution caps and keeps the raw tail.
 */
class StderrLines {
  linesDropped = 0;
  bytesDropped = 0;
  private linesEmitted = 0;
  private bytesEmitted = 0;
  private capped = false;
  /** The current line: kept bytes (at most maxLineBytes), its full length, whether it started. */
  private parts: Buffer[] = [];
  private kept = 0;
  private total = 0;
  private inLine = false;
  private dropping = false;
  private tailBuf: Buffer = Buffer.alloc(0);

  constructor(
    private readonly limits: RunLimits,
    private readonly emit: (line: string) => void,
  ) {}

  push(chunk: Buffer): void {
    this.keepTail(chunk);
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.append(chunk.subarray(start, end));
      if (nl === -1) break;
      this.endLine();
      start = nl + 1;
    }
  }

  /** EOF: a last line without a newline is still a line. */
  end(): void {
    if (this.inLine) this.endLine();
  }

  tail(): string {
    let buf = this.tailBuf;
    // The cut may land inside a character: skip its continuation bytes.
    let i = 0;
    while (i < 3 && i < buf.length && (buf[i]! & 0xc0) === 0x80) i++;
    buf = buf.subarray(i);
    return buf.toString('utf8');
  }

  private append(seg: Buffer): void {
    if (!this.inLine) {
      this.inLine = true;
      this.dropping =
        this.capped ||
        this.linesEmitted >= this.limits.maxStderrLines ||
        this.bytesEmitted >= this.limits.maxStderrBytes;
      if (this.dropping) this.capped = true;
    }
    this.total += seg.length;
    if (this.dropping) return;
    const room = this.limits.maxLineBytes - this.kept;
    if (room <= 0 || seg.length === 0) return;
    // Copy: a slice would pin the whole chunk while a long line is still being read.
    const part = Buffer.from(seg.subarray(0, room));
    this.parts.push(part);
    this.kept += part.length;
  }

  private endLine(): void {
    if (!this.inLine) this.append(Buffer.alloc(0)); // an empty line is a line
    const total = this.total;
    const dropping = this.dropping;
    let buf = Buffer.concat(this.parts, this.kept);
    this.parts = [];
    this.kept = this.total = 0;
    this.inLine = this.dropping = false;

    if (dropping) {
      this.linesDropped++;
      this.bytesDropped += total;
      return;
    }
    let line: string;
    if (total > buf.length) {
      buf = buf.subarray(0, charBoundary(buf, buf.length));
      line = `${buf.toString('utf8')} [... ${total - buf.length} bytes truncated]`;
    } else {
      if (buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
      line = buf.toString('utf8');
    }
    if (this.bytesEmitted + buf.length > this.limits.maxStderrBytes) {
      this.capped = true;
      this.linesDropped++;
      this.bytesDropped += total;
      return;
    }
    this.linesEmitted++;
    this.bytesEmitted += buf.length;
    try {
      this.emit(line);
    } catch {
      // A failing listener must not take the runner (or the service) down.
    }
  }

  private keepTail(chunk: Buffer): void {
    const n = this.limits.tailBytes;
    if (chunk.length >= n) {
      this.tailBuf = Buffer.from(chunk.subarray(chunk.length - n));
    } else {
      const joined = Buffer.concat([this.tailBuf, chunk]);
      this.tailBuf = joined.subarray(Math.max(0, joined.length - n));
    }
  }
}

/** The largest cut <= end that does not split a UTF-8 character. */
function charBoundary(buf: Buffer, end: number): number {
  let i = end;
  while (i > 0 && (buf[i - 1]! & 0xc0) === 0x80) i--; // back over continuation bytes
  if (i === 0) return end;
  const lead = buf[i - 1]!;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return end - (i - 1) >= size ? end : i - 1;
}
