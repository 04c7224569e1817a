/**
 * Builds the real app for a test: temp data dir, optional skill roots / persona dirs, logs
 * captured as parsed JSON lines. `t.after`-style cleanup is the caller's: call `close()`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp, type OngridApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export class LogCapture extends Writable {
  readonly lines: LogLine[] = [];
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) this.lines.push(JSON.parse(l) as LogLine);
    cb();
  }
  messages(): string[] {
    return this.lines.map((l) => l.msg);
  }
  /** Everything logged, as text (for "never appears in the logs" assertions). */
  text(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n');
  }
}

export function tempDir(prefix = 'ongrid-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface SkillPackSpec {
  name: string;
  /** Body of a #!/bin/sh script (the shebang is added). */
  script: string;
  manifest?: Record<string, unknown>;
  /** Folder name under the root (default: name). */
  dir?: string;
}

/** Writes a skill pack (skill.json + run.sh, mode 755) under root; returns the pack folder. */
export function writeSkill(root: string, spec: SkillPackSpec): string {
  const dir = path.join(root, spec.dir ?? spec.name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'run.sh'), `#!/bin/sh\n${spec.script}\n`, { mode: 0o755 });
  fs.writeFileSync(
    path.join(dir, 'skill.json'),
    JSON.stringify({ name: spec.name, description: `test skill ${spec.name}`, entry: 'run.sh', env_allow: ['PATH'], ...spec.manifest }),
  );
  return dir;
}

export interface TestApp extends OngridApp {
  logs: LogCapture;
  dataDir: string;
}

export async function startApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = env.ONGRID_DATA_DIR ?? tempDir('ongrid-data-');
  const logs = new LogCapture();
  const config = loadConfig({ ONGRID_SKILLS_WATCH: 'false', ONGRID_KILL_GRACE_MS: '500', ...env, ONGRID_DATA_DIR: dataDir });
  const app = await buildApp(config, pino({ level: 'debug' }, logs));
  await app.start();
  return { ...app, logs, dataDir };
}

/** Polls `fn` until it returns a truthy value or the deadline passes (then throws). */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
