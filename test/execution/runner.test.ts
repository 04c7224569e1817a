import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  checkEntry,
  DEFAULT_RUN_LIMITS,
  runSubprocess,
  type RunRequest,
  type RunResult,
} from '../../src/execution/runner.js';

let tmp: string;
let root: string;
let outside: string;
/** Processes a test may leave behind when it fails; killed in after(). */
const leftovers: number[] = [];

before(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'runner-test-')));
  root = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
});

after(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

let counter = 0;
/** Writes an executable #!/bin/sh skill into its own folder under the root. */
function skill(body: string, dir = root): { entry: string; cwd: string } {
  const cwd = path.join(dir, `skill-${++counter}`);
  fs.mkdirSync(cwd);
  const entry = path.join(cwd, 'run.sh');
  fs.writeFileSync(entry, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return { entry, cwd };
}

/** Runs with test defaults; the result carries the emitted stderr lines. */
async function run(
  s: { entry: string; cwd: string },
  over: Partial<RunRequest> = {},
): Promise<RunResult & { lines: string[] }> {
  const lines: string[] = [];
  const r = await runSubprocess({
    entry: s.entry,
    rootReal: root,
    cwd: s.cwd,
    env: {},
    input: '{}',
    timeoutMs: 10_000,
    killGraceMs: 500,
    onStderrLine: (line) => lines.push(line),
    ...over,
  });
  return { ...r, lines };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Orphans are reaped by init a little later; poll until the pid is gone, with a deadline. */
async function waitGone(pid: number, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return !alive(pid);
}

async function waitFile(file: string, ms = 5000): Promise<string> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
    if (text) return text;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${file} never appeared`);
}

function readPid(file: string): number {
  const pid = Number(fs.readFileSync(file, 'utf8').trim());
  assert.ok(Number.isInteger(pid) && pid > 0, `a pid in ${file}`);
  leftovers.push(pid);
  return pid;
}

describe('runSubprocess: normal runs', () => {
  test('stdin reaches the child and its stdout comes back verbatim', async () => {
    const input = JSON.stringify({ greeting: 'héllo', n: [1, 2, 3] });
    const started: number[] = [];
    const r = await run(skill('exec /bin/cat'), { input, onStart: (pid) => started.push(pid) });
    assert.equal(r.outcome, 'exited');
    assert.equal(r.exitCode, 0);
    assert.equal(r.signal, null);
    assert.equal(r.stdout, input);
    assert.equal(started.length, 1);
    assert.ok(Number.isInteger(r.durationMs) && r.durationMs >= 0);
  });

  test('the child runs in the manifest folder with no arguments', async () => {
    const s = skill('echo "$PWD|$#"');
    const r = await run(s);
    assert.equal(r.stdout, `${s.cwd}|0\n`);
  });

  test('env {} gives the child an empty environment even when the service holds a secret', async () => {
    process.env.RUNNER_TEST_SECRET = 'hunter2';
    try {
      // /proc/$$/environ is exactly what the kernel handed to the process at exec.
      const s = skill('/usr/bin/tr "\\000" "\\n" < /proc/$$/environ; echo ---; /usr/bin/env');
      const r = await run(s, { env: {} });
      assert.equal(r.outcome, 'exited');
      const [environ, shown] = r.stdout.split('---\n');
      assert.equal(environ, '');
      assert.doesNotMatch(shown ?? '', /RUNNER_TEST_SECRET|hunter2|PATH=/);
    } finally {
      delete process.env.RUNNER_TEST_SECRET;
    }
  });

  test('an environment holding only PATH is passed exactly', async () => {
    const s = skill('tr "\\000" "\\n" < /proc/$$/environ');
    const r = await run(s, { env: { PATH: '/usr/bin:/bin' } });
    assert.equal(r.outcome, 'exited');
    assert.equal(r.stdout, 'PATH=/usr/bin:/bin\n');
  });

  test('stdout that is not JSON is still returned as text', async () => {
    const r = await run(skill('echo "this is not json"'));
    assert.equal(r.outcome, 'exited');
    assert.equal(r.stdout, 'this is not json\n');
  });

  test('a non-zero exit reports the code, a message and the stderr tail', async () => {
    const r = await run(skill('echo "first" >&2; echo "disk full" >&2; exit 3'));
    assert.equal(r.outcome, 'exited');
    assert.equal(r.exitCode, 3);
    assert.equal(r.stderrTail, 'first\ndisk full\n');
    assert.match(r.message ?? '', /code 3/);
    assert.deepEqual(r.lines, ['first', 'disk full']);
  });

  test('the stderr tail keeps only the last tailBytes of raw stderr, beyond every cap', async () => {
    // 100 lines of 100 bytes; only 2 lines may be emitted but the tail still sees the end.
    const s = skill('i=0; while [ $i -lt 100 ]; do printf "%099d\\n" $i >&2; i=$((i+1)); done; exit 1');
    const r = await run(s, { limits: { maxStderrLines: 2 } });
    assert.equal(r.stderrTail.length, DEFAULT_RUN_LIMITS.tailBytes);
    assert.ok(r.stderrTail.endsWith(`${'0'.repeat(97)}99\n`));
    assert.equal(r.lines.length, 2);
    assert.equal(r.stderrLinesDropped, 98);
    assert.equal(r.stderrBytesDropped, 98 * 99);
  });

  test('an entry killed by a signal it did not get from the runner is signaled', async () => {
    const r = await run(skill('kill -9 $$'));
    assert.equal(r.outcome, 'signaled');
    assert.equal(r.signal, 'SIGKILL');
    assert.equal(r.exitCode, null);
  });

  test('a child that never reads stdin while the input is nearly 1 MiB still yields a result', async () => {
    const input = JSON.stringify({ blob: 'x'.repeat(1024 * 1024 - 64) });
    const r = await run(skill('echo done; exit 0'), { input });
    assert.equal(r.outcome, 'exited');
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, 'done\n');
  });

  test('invalid UTF-8 on stdout and stderr becomes U+FFFD without a crash', async () => {
    const r = await run(skill('printf "a\\377\\376b" ; printf "c\\377d\\n" >&2'));
    assert.equal(r.outcome, 'exited');
    assert.equal(r.stdout, 'a\uFFFD\uFFFDb');
    assert.deepEqual(r.lines, ['c\uFFFDd']);
  });

  test('stderr lines arrive in order, CRLF is trimmed and a last line without newline is a line', async () => {
    const r = await run(skill('printf "one\\ntwo\\r\\n\\nthree" >&2'));
    assert.deepEqual(r.lines, ['one', 'two', '', 'three']);
  });

  test('a throwing stderr listener does not break the run', async () => {
    const r = await runSubprocess({
      ...skill('echo a >&2; echo b >&2; echo "{}"'),
      rootReal: root,
      env: {},
      input: '',
      timeoutMs: 10_000,
      killGraceMs: 500,
      onStderrLine: () => {
        throw new Error('listener bug');
      },
    });
    assert.equal(r.outcome, 'exited');
    assert.equal(r.stdout, '{}\n');
  });
});

describe('runSubprocess: output caps', () => {
  test('100 MiB of stdout ends as output_too_large without holding it', async () => {
    const r = await run(skill('exec /usr/bin/head -c 104857600 /dev/zero'));
    assert.equal(r.outcome, 'output_too_large');
    assert.equal(r.stdout, '');
    assert.match(r.message ?? '', /16777216 bytes/);
    assert.ok(r.durationMs < 20_000, 'did not hang');
  });

  test('stdout exactly at the cap is accepted, one byte more is not', async () => {
    const limits = { maxStdoutBytes: 1000 };
    const ok = await run(skill('/usr/bin/head -c 1000 /dev/zero'), { limits });
    assert.equal(ok.outcome, 'exited');
    assert.equal(ok.stdout.length, 1000);
    const over = await run(skill('/usr/bin/head -c 1001 /dev/zero'), { limits });
    assert.equal(over.outcome, 'output_too_large');
  });

  test('a 10 MiB stderr line is cut and 100,000 more lines are capped and counted', async () => {
    const s = skill(
      '/usr/bin/head -c 10485760 /dev/zero | /usr/bin/tr "\\000" x >&2; echo >&2; /usr/bin/seq 1 100000 >&2',
    );
    const r = await run(s);
    assert.equal(r.outcome, 'exited');
    const max = DEFAULT_RUN_LIMITS.maxStderrLines;
    assert.equal(r.lines.length, max);
    const long = r.lines[0] ?? '';
    const cut = DEFAULT_RUN_LIMITS.maxLineBytes;
    assert.equal(long, `${'x'.repeat(cut)} [... ${10485760 - cut} bytes truncated]`);
    // Emitted: the long line and 1..9999; dropped: 10000..100000.
    assert.equal(r.lines[1], '1');
    assert.equal(r.lines[max - 1], String(max - 1));
    assert.equal(r.stderrLinesDropped, 100000 - (max - 1));
    let bytes = 0;
    for (let i = max; i <= 100000; i++) bytes += String(i).length;
    assert.equal(r.stderrBytesDropped, bytes);
    assert.ok(r.stderrTail.endsWith('99999\n100000\n'));
  });

  test('the stderr byte cap drops every line from the first one that does not fit', async () => {
    const s = skill('for w in aaaa bbbb cccc d eeee; do echo $w >&2; done');
    const r = await run(s, { limits: { maxStderrBytes: 10 } });
    assert.deepEqual(r.lines, ['aaaa', 'bbbb']);
    assert.equal(r.stderrLinesDropped, 3);
    assert.equal(r.stderrBytesDropped, 4 + 1 + 4);
  });

  test('a cut line never splits a UTF-8 character', async () => {
    // 'é' is 2 bytes: a 5-byte cut keeps 2 characters and reports 4 bytes cut.
    const r = await run(skill('printf "ééééé\\n" >&2'), { limits: { maxLineBytes: 5 } });
    assert.deepEqual(r.lines, ['éé [... 6 bytes truncated]']);
  });
});

describe('runSubprocess: lifetime, timeout and cancel', () => {
  test('a child ignoring SIGTERM is killed after the grace and reported timed_out', async () => {
    const pidFile = path.join(tmp, `term-${++counter}.pid`);
    const s = skill(`trap '' TERM; echo $$ > ${pidFile}; while :; do /usr/bin/sleep 1; done`);
    const timeoutMs = 300;
    const killGraceMs = 400;
    const t0 = Date.now();
    const r = await run(s, { timeoutMs, killGraceMs });
    const elapsed = Date.now() - t0;
    assert.equal(r.outcome, 'timed_out');
    assert.equal(r.signal, 'SIGKILL', 'it took SIGKILL, not SIGTERM, to end it');
    assert.ok(elapsed >= timeoutMs + killGraceMs - 50, 'the grace was granted');
    assert.ok(elapsed < timeoutMs + killGraceMs + 5000, 'did not hang');
    assert.match(r.message ?? '', /300 ms/);
    assert.ok(await waitGone(readPid(pidFile)));
  });

  test('a child that exits on SIGTERM at the deadline is timed_out, not exited', async () => {
    const r = await run(skill('exec /usr/bin/sleep 600'), { timeoutMs: 200, killGraceMs: 5000 });
    assert.equal(r.outcome, 'timed_out');
    assert.equal(r.signal, 'SIGTERM');
    assert.ok(r.durationMs < 4000, 'ended by SIGTERM, long before the grace');
  });

  test('a grandchild holding stdout cannot make a timed-out run outlast timeout + grace', async () => {
    const pidFile = path.join(tmp, `gc-${++counter}.pid`);
    // Everything ignores SIGTERM, so only the SIGKILL after the grace frees the pipe.
    const s = skill(`trap '' TERM; /usr/bin/sleep 600 & echo $! > ${pidFile}; /usr/bin/sleep 600`);
    const timeoutMs = 300;
    const killGraceMs = 500;
    const t0 = Date.now();
    const r = await run(s, { timeoutMs, killGraceMs });
    assert.equal(r.outcome, 'timed_out');
    assert.ok(Date.now() - t0 < timeoutMs + killGraceMs + 5000, 'did not hang');
    assert.ok(await waitGone(readPid(pidFile)), 'the grandchild is gone');
  });

  test('an entry that exits at once leaving a grandchild resolves promptly and takes it along', async () => {
    const pidFile = path.join(tmp, `gc-${++counter}.pid`);
    const s = skill(`/usr/bin/sleep 600 & echo $! > ${pidFile}; echo '{"ok":true}'; exit 0`);
    const timeoutMs = 20_000;
    const r = await run(s, { timeoutMs, killGraceMs: 3000 });
    assert.equal(r.outcome, 'exited');
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, '{"ok":true}\n');
    assert.ok(r.durationMs < 2500, 'did not wait for the grace, let alone the timeout');
    assert.ok(await waitGone(readPid(pidFile)), 'the grandchild is gone');
  });

  test('a grandchild that escaped the group (setsid) and holds the pipes is cut off after the grace', async () => {
    const pidFile = path.join(tmp, `gc-${++counter}.pid`);
    // The entry waits until the grandchild is in its own session, then exits at once.
    const s = skill(
      `/usr/bin/setsid /bin/sh -c 'echo $$ > ${pidFile}; exec /usr/bin/sleep 600' &\n` +
        `while [ ! -s ${pidFile} ]; do :; done; echo '{}'; exit 0`,
    );
    const killGraceMs = 400;
    const r = await run(s, { timeoutMs: 20_000, killGraceMs });
    const pid = readPid(pidFile); // killed in after(): it left the group, so it may outlive the run
    assert.equal(r.outcome, 'exited');
    assert.equal(r.stdout, '{}\n');
    assert.ok(alive(pid), 'a process outside the group is not the runner\'s to kill');
    assert.ok(r.durationMs >= killGraceMs - 50, 'the pipes were read until the grace ended');
    assert.ok(r.durationMs < killGraceMs + 5000, 'did not hang on the open pipe');
  });

  test('aborting the signal cancels a running child and kills its whole group', async () => {
    const pidFile = path.join(tmp, `gc-${++counter}.pid`);
    const s = skill(`/usr/bin/sleep 600 & echo $! > ${pidFile}; /usr/bin/sleep 600`);
    const ac = new AbortController();
    let entryPid = 0;
    const p = run(s, { signal: ac.signal, onStart: (pid) => (entryPid = pid) });
    await waitFile(pidFile);
    ac.abort();
    const r = await p;
    assert.equal(r.outcome, 'cancelled');
    assert.ok(entryPid > 0);
    assert.ok(await waitGone(readPid(pidFile)), 'the grandchild is gone');
    assert.ok(await waitGone(entryPid), 'the entry is gone');
  });

  test('an already aborted signal does not start the child', async () => {
    const marker = path.join(tmp, `started-${++counter}`);
    const ac = new AbortController();
    ac.abort();
    const r = await run(skill(`echo > ${marker}`), { signal: ac.signal });
    assert.equal(r.outcome, 'cancelled');
    assert.equal(fs.existsSync(marker), false);
  });
});

describe('runSubprocess: spawn failures', () => {
  test('an entry deleted after the request was built is spawn_failed', async () => {
    const s = skill('echo hi');
    fs.rmSync(s.entry);
    const r = await run(s);
    assert.equal(r.outcome, 'spawn_failed');
    assert.match(r.message ?? '', /not found/);
  });

  test('an entry made non-executable is spawn_failed', async () => {
    const s = skill('echo hi');
    fs.chmodSync(s.entry, 0o644);
    const r = await run(s);
    assert.equal(r.outcome, 'spawn_failed');
    assert.match(r.message ?? '', /not executable/);
  });

  test('an entry swapped for a symlink to outside the root is spawn_failed and does not run', async () => {
    const marker = path.join(tmp, `escaped-${++counter}`);
    const evil = skill(`echo > ${marker}`, outside);
    const s = skill('echo hi');
    fs.rmSync(s.entry);
    fs.symlinkSync(evil.entry, s.entry);
    const r = await run(s);
    assert.equal(r.outcome, 'spawn_failed');
    assert.match(r.message ?? '', /outside its root/);
    assert.equal(fs.existsSync(marker), false);
  });

  test('an exec failure (missing or non-executable interpreter) is spawn_failed, not a crash', async () => {
    const missing = skill('echo hi');
    fs.writeFileSync(missing.entry, '#!/nonexistent/interpreter\n', { mode: 0o755 });
    const r1 = await run(missing);
    assert.equal(r1.outcome, 'spawn_failed');
    assert.match(r1.message ?? '', /ENOENT/);

    const notExec = skill('echo hi');
    const interpreter = path.join(tmp, `interp-${++counter}`);
    fs.writeFileSync(interpreter, '#!/bin/sh\n', { mode: 0o644 });
    fs.writeFileSync(notExec.entry, `#!${interpreter}\n`, { mode: 0o755 });
    const r2 = await run(notExec);
    assert.equal(r2.outcome, 'spawn_failed');
    assert.match(r2.message ?? '', /EACCES/);
  });

  test('a missing working folder is spawn_failed', async () => {
    const s = skill('echo hi');
    const r = await run({ entry: s.entry, cwd: path.join(tmp, 'no-such-dir') });
    assert.equal(r.outcome, 'spawn_failed');
  });
});

describe('checkEntry', () => {
  test('accepts an executable file inside the root and returns its realpath', async () => {
    const s = skill('echo hi');
    const link = path.join(s.cwd, 'link.sh');
    fs.symlinkSync(s.entry, link);
    assert.deepEqual(await checkEntry(link, root), { ok: true, real: s.entry });
  });

  test('rejects the root itself, a folder, and a sibling folder sharing the root name prefix', async () => {
    assert.equal((await checkEntry(root, root)).ok, false);
    const s = skill('echo hi');
    assert.equal((await checkEntry(s.cwd, root)).ok, false);
    const sibling = path.join(tmp, 'root-evil');
    fs.mkdirSync(sibling);
    const evil = skill('echo hi', sibling);
    const r = await checkEntry(evil.entry, root);
    assert.equal(r.ok, false);
  });
});
