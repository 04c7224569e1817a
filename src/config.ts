/**
 * Configuration: the environment is the only source (CONTRACT section 1). Every variable is
 * parsed here, once; an invalid value throws ConfigError naming the variable, and main.ts turns
 * that into one log line and a non-zero exit. Nothing silently falls back.
 */
import path from 'node:path';

export type LogFormat = 'json' | 'pretty';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  skillsExternalDirs: string;
  skillsWatch: boolean;
  skillsWatchPollMs: number;
  personasDirs: string;
  defaultPersona: string;
  httpHost: string;
  httpPort: number;
  dataDir: string;
  apiTokensFile: string;
  maxConcurrentExecutions: number;
  maxQueuedExecutions: number;
  approvalTtlSeconds: number;
  killGraceMs: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** Folder of built-in SKILL.md skills (not an environment variable: ships with the project). */
  nativeSkillsDir: string;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`invalid configuration: ${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function str(env: Env, name: string, def: string): string {
  return raw(env, name) ?? def;
}

function int(env: Env, name: string, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = raw(env, name);
  if (v === undefined) return def;
  if (!/^-?\d+$/.test(v)) throw new ConfigError(name, `"${v}" is not an integer`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `${n} is out of range (${min}..${max})`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const v = raw(env, name);
  if (v === undefined) return def;
  const l = v.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(l)) return true;
  if (['false', '0', 'no', 'off'].includes(l)) return false;
  throw new ConfigError(name, `"${v}" is not a boolean (true/false)`);
}

function oneOf<T extends string>(env: Env, name: string, def: T, allowed: readonly T[]): T {
  const v = raw(env, name);
  if (v === undefined) return def;
  if (!(allowed as readonly string[]).includes(v)) {
    throw new ConfigError(name, `"${v}" is not one of ${allowed.join(', ')}`);
  }
  return v as T;
}

const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', import.meta.dirname.includes(`${path.sep}dist${path.sep}`) ? '..' : '.');

export function loadConfig(env: Env = process.env): Config {
  return {
    skillsExternalDirs: env.ONGRID_SKILLS_EXTERNAL_DIRS ?? '',
    skillsWatch: bool(env, 'ONGRID_SKILLS_WATCH', true),
    skillsWatchPollMs: int(env, 'ONGRID_SKILLS_WATCH_POLL_MS', 0, 0, 3_600_000),
    personasDirs: env.ONGRID_PERSONAS_DIRS ?? '',
    defaultPersona: str(env, 'ONGRID_DEFAULT_PERSONA', 'default'),
    httpHost: str(env, 'ONGRID_HTTP_HOST', '127.0.0.1'),
    httpPort: int(env, 'ONGRID_HTTP_PORT', 8080, 0, 65535),
    dataDir: path.resolve(str(env, 'ONGRID_DATA_DIR', './data')),
    apiTokensFile: str(env, 'ONGRID_API_TOKENS_FILE', ''),
    maxConcurrentExecutions: int(env, 'ONGRID_MAX_CONCURRENT_EXECUTIONS', 8, 1, 10_000),
    maxQueuedExecutions: int(env, 'ONGRID_MAX_QUEUED_EXECUTIONS', 64, 0, 1_000_000),
    approvalTtlSeconds: int(env, 'ONGRID_APPROVAL_TTL_SECONDS', 900, 1, 31_536_000),
    killGraceMs: int(env, 'ONGRID_KILL_GRACE_MS', 2000, 0, 600_000),
    logLevel: oneOf(env, 'ONGRID_LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    logFormat: oneOf(env, 'ONGRID_LOG_FORMAT', 'json', ['json', 'pretty']),
    nativeSkillsDir: path.join(PROJECT_ROOT, 'skills'),
  };
}
