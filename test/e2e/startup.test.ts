/**
 * The real process (src/main.ts) refusing bad starts (CONTRACT sections 1, 7 and 12): a
 * non-loopback host without tokens, an invalid setting, an invalid tokens file. Each refusal is
 * one log line naming the problem and a non-zero exit; a good configuration starts and stops.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, tempDir } from '../helpers/app.js';

const PROJECT = path.resolve(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function mkdir(): string {
  const d = tempDir('ongrid-startup-');
  dirs.push(d);
  return d;
}

interface Run {
  child: ChildProcess;
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node --import tsx src/main.ts` with only these variables (plus PATH) set. */
function startService(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: PROJECT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ONGRID_DATA_DIR: path.join(mkdir(), 'data'), ONGRID_HTTP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: string[] = [];
  let buf = '';
  const collect = (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    lines.push(...parts.filter((l) => l.trim() !== ''));
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      if (buf.trim() !== '') lines.push(buf);
      resolve({ code, signal });
    });
  });
  return { child, lines, exited };
}

/** Waits for the process to exit on its own, killing it if it has not within the deadline. */
async function exitOf(run: Run, timeoutMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`the service did not exit within ${timeoutMs} ms; output:\n${run.lines.join('\n')}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([run.exited, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asserts a refused start: non-zero exit, exactly one output line, a JSON log line matching `pattern`. */
async function assertRefused(env: Record<string, string>, pattern: RegExp): Promise<Record<string, unknown>> {
  const run = startService(env);
  const { code } = await exitOf(run);
  assert.notEqual(code, 0, 'exit code');
  assert.notEqual(code, null, 'exited by itself, not by a signal');
  assert.equal(run.lines.length, 1, `one line, got:\n${run.lines.join('\n')}`);
  const line = JSON.parse(run.lines[0]!) as Record<string, unknown>;
  assert.match(String(line.msg), pattern);
  assert.ok(!String(line.msg).includes('    at '), 'no stack trace');
  assert.ok(!('stack' in line) && !('err' in line), 'no stack trace fields');
  return line;
}

function tokensFile(content: string): string {
  const file = path.join(mkdir(), 'tokens.json');
  fs.writeFileSync(file, content);
  return file;
}

describe('refused starts', { concurrency: 4 }, () => {
  test('0.0.0.0 without ONGRID_API_TOKENS_FILE: one line naming the problem, non-zero exit', async () => {
    const line = await assertRefused({ ONGRID_HTTP_HOST: '0.0.0.0' }, /non-loopback.*0\.0\.0\.0.*ONGRID_API_TOKENS_FILE/);
    assert.equal(line.variable, 'ONGRID_HTTP_HOST');
  });

  test('an IPv6 wildcard host without tokens is refused too', async () => {
    await assertRefused({ ONGRID_HTTP_HOST: '::' }, /non-loopback.*ONGRID_API_TOKENS_FILE/);
  });

  test('ONGRID_HTTP_PORT=abc: one line naming the variable, non-zero exit', async () => {
    const line = await assertRefused({ ONGRID_HTTP_PORT: 'abc' }, /ONGRID_HTTP_PORT/);
    assert.equal(line.variable, 'ONGRID_HTTP_PORT');
  });

  test('ONGRID_MAX_QUEUED_EXECUTIONS=-1: one line naming the variable, non-zero exit', async () => {
    const line = await assertRefused({ ONGRID_MAX_QUEUED_EXECUTIONS: '-1' }, /ONGRID_MAX_QUEUED_EXECUTIONS/);
    assert.equal(line.variable, 'ONGRID_MAX_QUEUED_EXECUTIONS');
  });

  test('a tokens file that does not exist refuses the start', async () => {
    await assertRefused({ ONGRID_API_TOKENS_FILE: path.join(mkdir(), 'missing.json') }, /ONGRID_API_TOKENS_FILE.*cannot be read/);
  });

  test('a tokens file that is not JSON refuses the start without echoing its content', async () => {
    const file = tokensFile('[{"subject": "alice", "token_sha256": raw-secret-value}]');
    const line = await assertRefused({ ONGRID_API_TOKENS_FILE: file }, /ONGRID_API_TOKENS_FILE.*not valid JSON/);
    assert.ok(!JSON.stringify(line).includes('raw-secret-value'), 'the file content stays out of the log');
  });

  test('a tokens file entry without a sha256 hex digest refuses the start', async () => {
    await assertRefused(
      { ONGRID_API_TOKENS_FILE: tokensFile(JSON.stringify([{ subject: 'alice', token_sha256: 'plain-token' }])), ONGRID_HTTP_HOST: '0.0.0.0' },
      /ONGRID_API_TOKENS_FILE.*token_sha256/,
    );
  });

  test('an empty tokens list refuses the start (auth never silently turns off)', async () => {
    await assertRefused({ ONGRID_API_TOKENS_FILE: tokensFile('[]'), ONGRID_HTTP_HOST: '0.0.0.0' }, /ONGRID_API_TOKENS_FILE/);
  });
});

describe('a good start', () => {
  test('0.0.0.0 with a valid tokens file listens, protects /v1, and exits 0 on SIGTERM', async () => {
    const token = 'startup-test-token-5f4e3d2c1b0a';
    const file = tokensFile(JSON.stringify([{ subject: 'ops', token_sha256: createHash('sha256').update(token).digest('hex') }]));
    const run = startService({ ONGRID_HTTP_HOST: '0.0.0.0', ONGRID_API_TOKENS_FILE: file, ONGRID_SKILLS_WATCH: 'false' });
    try {
      const port = await eventually(
        () => {
          if (run.child.exitCode !== null) throw new Error(`exited early:\n${run.lines.join('\n')}`);
          for (const l of run.lines) {
            const m = /Server listening at http:\/\/[^\s"]*:(\d+)/.exec(l);
            if (m) return Number(m[1]);
          }
          return undefined;
        },
        20_000,
        'the listen log line',
      );
      const base = `http://127.0.0.1:${port}`;
      await eventually(async () => (await fetch(`${base}/readyz`)).status === 200, 20_000, 'readiness');
      assert.equal((await fetch(`${base}/v1/skills`)).status, 401);
      const ok = await fetch(`${base}/v1/skills`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      await ok.arrayBuffer();
      run.child.kill('SIGTERM');
      const { code } = await exitOf(run);
      assert.equal(code, 0);
      assert.ok(!run.lines.join('\n').includes(token), 'the token never reaches the log');
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });
});
