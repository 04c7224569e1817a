import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { hashToken, parseTokenEntries, TokenVerifier } from '../../src/policy/auth.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface Mount {
  type: string;
  source: string;
  target: string;
  read_only?: boolean;
}
interface Service {
  build?: unknown;
  ports?: string[];
  env_file?: unknown[];
  environment?: Record<string, string>;
  volumes?: (string | Mount)[];
  secrets?: (string | { source: string; target?: string })[];
  restart?: string;
  stop_grace_period?: string;
  healthcheck?: { test?: string[] | string };
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string }>;
}

const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as Compose;
const svc = compose.services.ongrid!;
const env = svc.environment ?? {};

/** Short (`src:dst:ro`) and long volume syntax → one shape. */
function mounts(): Mount[] {
  return (svc.volumes ?? []).map((v) => {
    if (typeof v !== 'string') return v;
    const [source = '', target = '', mode = ''] = v.split(':');
    const type = source.startsWith('.') || source.startsWith('/') ? 'bind' : 'volume';
    return { type, source, target, read_only: mode.split(',').includes('ro') };
  });
}
const mountAt = (target: string) => mounts().find((m) => m.target === target);

/** Compose durations like `130s`, `2m`, `1m30s` → seconds. */
function seconds(d: string): number {
  let total = 0;
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) total += Number(m[1]) * { h: 3600, m: 60, s: 1, ms: 0.001 }[m[2] as 'h' | 'm' | 's' | 'ms'];
  return total;
}

describe('docker-compose.yml', () => {
  test('defines the ongrid service built from this repository', () => {
    assert.ok(compose.services.ongrid, 'service ongrid');
    assert.equal(svc.build, '.');
    assert.equal(svc.restart, 'unless-stopped');
    assert.ok(svc.ports?.includes('8080:8080'));
  });

  test('mounts the example skills read-only where ONGRID_SKILLS_EXTERNAL_DIRS points', () => {
    assert.equal(env.ONGRID_SKILLS_EXTERNAL_DIRS, '/etc/ongrid/skills');
    const m = mountAt('/etc/ongrid/skills');
    assert.ok(m, 'skills mount');
    assert.equal(m.type, 'bind');
    assert.equal(m.source, './examples/skills');
    assert.equal(m.read_only, true);
    const packs = fs.readdirSync(path.join(ROOT, m.source)).filter((d) => fs.existsSync(path.join(ROOT, m.source, d, 'skill.json')));
    assert.ok(packs.length > 0, 'the mounted folder holds skill packs');
  });

  test('every bind mount source exists and every configured folder is mounted', () => {
    for (const m of mounts().filter((x) => x.type === 'bind')) assert.ok(fs.existsSync(path.join(ROOT, m.source)), `${m.source} exists`);
    for (const name of ['ONGRID_SKILLS_EXTERNAL_DIRS', 'ONGRID_PERSONAS_DIRS']) {
      for (const dir of (env[name] ?? '').split(/[:,]/).filter(Boolean)) assert.ok(mountAt(dir), `${name} entry ${dir} is mounted`);
    }
  });

  test('keeps the database on a named volume declared at top level', () => {
    const m = mountAt(env.ONGRID_DATA_DIR ?? '/var/lib/ongrid');
    assert.ok(m, 'data mount at ONGRID_DATA_DIR');
    assert.equal(m.type, 'volume');
    assert.equal(m.source, 'ongrid-data');
    assert.ok(compose.volumes && 'ongrid-data' in compose.volumes, 'ongrid-data declared under volumes:');
  });

  test('passes the tokens file as a secret at ONGRID_API_TOKENS_FILE', () => {
    assert.equal(compose.secrets?.ongrid_tokens?.file, './secrets/ongrid-tokens.json');
    const ref = svc.secrets?.find((s) => (typeof s === 'string' ? s : s.source) === 'ongrid_tokens');
    assert.ok(ref, 'the service uses the secret');
    const target = typeof ref === 'string' ? 'ongrid_tokens' : (ref.target ?? ref.source);
    assert.equal(env.ONGRID_API_TOKENS_FILE, `/run/secrets/${target}`);
  });

  test('reads an optional .env and pins the settings the mounts and ports depend on', () => {
    assert.deepEqual(svc.env_file, [{ path: '.env', required: false }]);
    assert.equal(env.ONGRID_HTTP_HOST, '0.0.0.0');
    const known = new Set(fs.readFileSync(path.join(ROOT, 'src', 'config.ts'), 'utf8').match(/ONGRID_[A-Z_]+/g));
    for (const k of Object.keys(env)) assert.ok(known.has(k), `${k} is not read by src/config.ts`);
    const config = loadConfig(env);
    assert.equal(`${config.httpPort}:${config.httpPort}`, svc.ports?.[0]);
  });

  test('gives running executions their longest bundled timeout plus kill grace to finish on stop', () => {
    const dir = path.join(ROOT, 'examples', 'skills');
    const timeouts = fs
      .readdirSync(dir)
      .map((d) => path.join(dir, d, 'skill.json'))
      .filter((f) => fs.existsSync(f))
      .map((f) => (JSON.parse(fs.readFileSync(f, 'utf8')) as { timeout_seconds?: number }).timeout_seconds ?? 30);
    const needed = Math.max(30, ...timeouts) + loadConfig(env).killGraceMs / 1000;
    assert.ok(svc.stop_grace_period, 'stop_grace_period is set');
    assert.ok(seconds(svc.stop_grace_period) >= needed, `${svc.stop_grace_period} < ${needed}s`);
  });

  test('health-checks /healthz without curl', () => {
    const t = svc.healthcheck?.test;
    assert.ok(Array.isArray(t));
    assert.equal(t[0], 'CMD');
    assert.equal(t[1], 'node');
    assert.match(t.join(' '), /http:\/\/127\.0\.0\.1:8080\/healthz/);
  });
});

describe('secrets/ongrid-tokens.example.json', () => {
  const example = JSON.parse(fs.readFileSync(path.join(ROOT, 'secrets', 'ongrid-tokens.example.json'), 'utf8')) as { subject: string; token_sha256: string }[];

  test('documents how to make the hash and cannot be used unedited', () => {
    assert.match(example[0]?.token_sha256 ?? '', /printf %s "\$TOKEN" \| sha256sum/);
    assert.throws(() => parseTokenEntries(example, 'example'), /token_sha256 must be 64 hex characters/);
  });

  test('becomes a valid tokens file once the hash is filled in', () => {
    const filled = example.map((e) => ({ ...e, token_sha256: hashToken('s3cret') }));
    const verifier = new TokenVerifier(parseTokenEntries(filled, 'example'));
    assert.equal(verifier.verify('Bearer s3cret'), example[0]?.subject);
  });
});
