/**
 * Runs one admitted execution to its end: an external skill as a subprocess (runner.ts), a
 * native one in-process, both under the same deadline, cancellation and event timeline.
 * Maps the outcome to the status and error of CONTRACT section 5.
 */
import type { Skill } from '../skills/types.js';
import { runSubprocess, type RunResult } from './runner.js';
import type { EventWriter } from './event-writer.js';
import type { ExecutionError, ExecutionStatus } from './types.js';

export interface SkillOutcome {
  status: Extract<ExecutionStatus, 'succeeded' | 'failed' | 'timed_out' | 'cancelled'>;
  result: unknown;
  error: ExecutionError | null;
  /**
   * Data of the `exited` event when the skill ran and ended (absent when it never started).
   * Returned rather than appended so the caller stores it with the final status in one write.
   */
  exited?: Record<string, unknown>;
}

export interface RunContext {
  skill: Skill;
  args: Record<string, unknown>;
  events: EventWriter;
  signal: AbortSignal;
  killGraceMs: number;
  /** The service's environment, from which env_allow names are copied. */
  env: NodeJS.ProcessEnv;
}

/** setTimeout fires at once past 2^31-1 ms (~24.8 days): clamp huge manifest timeouts to that. */
export function timeoutMs(seconds: number): number {
  return Math.min(seconds * 1000, 2_147_483_647);
}

export function childEnv(allow: readonly string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of allow) {
    const v = env[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

function fail(code: string, message: string, extra: Partial<ExecutionError> = {}): SkillOutcome {
  return { status: 'failed', result: null, error: { code, message, ...extra } };
}

export function outcomeOf(r: RunResult, timeoutSeconds: number): SkillOutcome {
  const tail = r.stderrTail;
  switch (r.outcome) {
    case 'spawn_failed':
      return fail('spawn_failed', r.message ?? 'the entry could not be started');
    case 'timed_out':
      return { status: 'timed_out', result: null, error: { code: 'timeout', message: `no result within ${timeoutSeconds}s`, stderr_tail: tail } };
    case 'cancelled':
      return { status: 'cancelled', result: null, error: { code: 'cancelled', message: 'cancelled while running' } };
    case 'output_too_large':
      return fail('output_too_large', 'stdout exceeded the 16 MiB limit; the skill was killed', { stderr_tail: tail });
    case 'signaled':
      return fail('signaled', `the skill was killed by ${r.signal ?? 'a signal'}`, { stderr_tail: tail });
    case 'exited': {
      if (r.exitCode !== 0) {
        return fail('exit_nonzero', `the skill exited with code ${r.exitCode}`, { exit_code: r.exitCode ?? -1, stderr_tail: tail });
      }
      try {
        return { status: 'succeeded', result: JSON.parse(r.stdout), error: null };
      } catch (err) {
        return fail('invalid_output', `stdout is not valid JSON: ${(err as Error).message}`, { stderr_tail: tail });
      }
    }
  }
}

async function runExternal(ctx: RunContext & { skill: Extract<Skill, { source: 'external' }> }): Promise<SkillOutcome> {
  const { skill } = ctx;
  const r = await runSubprocess({
    entry: skill.entry,
    rootReal: skill.rootReal,
    cwd: skill.dir,
    env: childEnv(skill.envAllow, ctx.env),
    input: JSON.stringify(ctx.args),
    timeoutMs: timeoutMs(skill.timeoutSeconds),
    killGraceMs: ctx.killGraceMs,
    signal: ctx.signal,
    onStderrLine: (line) => ctx.events.add('stderr', { line }),
  });
  const outcome = outcomeOf(r, skill.timeoutSeconds);
  if (r.outcome === 'spawn_failed') return outcome;
  const dropped =
    r.stderrLinesDropped > 0 || r.stderrBytesDropped > 0
      ? { stderr_lines_dropped: r.stderrLinesDropped, stderr_bytes_dropped: r.stderrBytesDropped }
      : {};
  return { ...outcome, exited: { exit_code: r.exitCode, signal: r.signal, ...dropped } };
}

async function runNative(ctx: RunContext & { skill: Extract<Skill, { source: 'native' }> }): Promise<SkillOutcome> {
  const { skill } = ctx;
  const ac = new AbortController();
  const onAbort = () => ac.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs(skill.timeoutSeconds));
  });
  const cancelled = new Promise<'cancelled'>((resolve) => {
    if (ctx.signal.aborted) resolve('cancelled');
    ctx.signal.addEventListener('abort', () => resolve('cancelled'), { once: true });
  });
  try {
    const work = skill.impl(ctx.args, { signal: ac.signal, log: (line) => ctx.events.add('stderr', { line }) }).then(
      (value) => ({ ok: true as const, value }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    const r = await Promise.race([work, deadline, cancelled]);
    if (r === 'timeout') {
      ac.abort(new Error('timeout'));
      return { status: 'timed_out', result: null, error: { code: 'timeout', message: `no result within ${skill.timeoutSeconds}s` } };
    }
    if (r === 'cancelled') return { status: 'cancelled', result: null, error: { code: 'cancelled', message: 'cancelled while running' } };
    const exited = { exit_code: r.ok ? 0 : 1, signal: null };
    if (r.ok) return { status: 'succeeded', result: r.value ?? null, error: null, exited };
    return { ...fail('native_error', r.err instanceof Error ? r.err.message : String(r.err)), exited };
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

export function runSkill(ctx: RunContext): Promise<SkillOutcome> {
  const { skill } = ctx;
  return skill.source === 'external' ? runExternal({ ...ctx, skill }) : runNative({ ...ctx, skill });
}
