import { test } from 'node:test';
import assert from 'node:assert/strict';
import { childEnv, outcomeOf, timeoutMs } from '../../src/execution/run-skill.js';
import type { RunResult } from '../../src/execution/runner.js';

const base: RunResult = {
  outcome: 'exited', exitCode: 0, signal: null, stdout: '{"a":1}', stderrTail: 'tail', stderrLinesDropped: 0, stderrBytesDropped: 0, durationMs: 1,
};

test('a huge timeout_seconds is clamped so the timer cannot overflow and fire at once', () => {
  assert.equal(timeoutMs(30), 30_000);
  assert.equal(timeoutMs(10 ** 9), 2_147_483_647);
});

test('childEnv copies only allowed names that are set', () => {
  assert.deepEqual(childEnv(['PATH', 'NOPE'], { PATH: '/bin', SECRET: 's' }), { PATH: '/bin' });
  assert.deepEqual(childEnv([], { PATH: '/bin' }), {});
});

test('outcomes map to the statuses and codes of CONTRACT section 5', () => {
  assert.deepEqual(outcomeOf(base, 30), { status: 'succeeded', result: { a: 1 }, error: null });
  const cases: Array<[Partial<RunResult>, string, string]> = [
    [{ exitCode: 3 }, 'failed', 'exit_nonzero'],
    [{ stdout: 'not json' }, 'failed', 'invalid_output'],
    [{ outcome: 'signaled', exitCode: null, signal: 'SIGKILL' }, 'failed', 'signaled'],
    [{ outcome: 'output_too_large' }, 'failed', 'output_too_large'],
    [{ outcome: 'timed_out' }, 'timed_out', 'timeout'],
    [{ outcome: 'cancelled' }, 'cancelled', 'cancelled'],
    [{ outcome: 'spawn_failed', message: 'gone' }, 'failed', 'spawn_failed'],
  ];
  for (const [patch, status, code] of cases) {
    const o = outcomeOf({ ...base, ...patch }, 30);
    assert.equal(o.status, status, code);
    assert.equal(o.error?.code, code);
  }
  const nz = outcomeOf({ ...base, exitCode: 3 }, 30);
  assert.equal(nz.error?.exit_code, 3);
  assert.equal(nz.error?.stderr_tail, 'tail');
});
