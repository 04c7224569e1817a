import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile → instructions: comments dropped, `\` continuations joined, keyword upper-cased. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (line.trimEnd().endsWith('\\')) {
      pending += line.trimEnd().slice(0, -1) + ' ';
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (!full) continue;
    const m = /^(\S+)\s*(.*)$/s.exec(full);
    if (m) out.push({ op: m[1]!.toUpperCase(), args: m[2]!.replace(/\s+/g, ' ').trim() });
  }
  return out;
}

/** Splits at each FROM; the stage name is the `AS` alias. */
function stages(ins: Instruction[]) {
  const result: { from: string; name: string | undefined; body: Instruction[] }[] = [];
  for (const i of ins) {
    if (i.op === 'FROM') {
      const m = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(i.args);
      assert.ok(m, `unparsable FROM ${i.args}`);
      result.push({ from: m[1]!, name: m[2], body: [] });
    } else {
      result.at(-1)?.body.push(i);
    }
  }
  return result;
}

/** `ENV A=1 B=2` (and legacy `ENV A 1`) → entries. */
function envOf(body: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of body.filter((b) => b.op === 'ENV')) {
    if (!i.args.includes('=')) {
      const [k, ...v] = i.args.split(' ');
      env[k!] = v.join(' ');
      continue;
    }
    for (const m of i.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
      env[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
    }
  }
  return env;
}

const text = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const all = stages(parseDockerfile(text));
const build = all[0]!;
const runtime = all.at(-1)!;
const runs = (body: Instruction[]) => body.filter((i) => i.op === 'RUN').map((i) => i.args).join('\n');
const copies = (body: Instruction[]) => body.filter((i) => i.op === 'COPY' || i.op === 'ADD').map((i) => i.args);
const only = (body: Instruction[], op: string) => {
  const found = body.filter((i) => i.op === op);
  assert.equal(found.length, 1, `expected exactly one ${op}`);
  return found[0]!.args;
};

describe('Dockerfile', () => {
  test('is multi-stage on official node 20 slim images', () => {
    assert.ok(all.length >= 2, 'needs a build stage and a runtime stage');
    for (const s of all) assert.match(s.from, /^node:20-bookworm-slim(@sha256:[0-9a-f]{64})?$/);
    assert.ok(build.name, 'the build stage is named so the runtime stage can copy from it');
  });

  test('build stage has native build tools, installs from the lockfile, compiles, then drops dev dependencies', () => {
    const r = runs(build.body);
    for (const tool of ['python3', 'make', 'g++']) assert.match(r, new RegExp(`apt-get install[^\\n]*\\s${tool.replace('+', '\\+')}(\\s|$)`));
    assert.match(r, /\bnpm ci\b/);
    assert.match(r, /\bnpm run build\b/);
    assert.match(r, /\bnpm (prune|ci)\b[^\n]*--omit=dev\b/);
    assert.ok(r.indexOf('npm run build') < r.search(/--omit=dev/), 'dev dependencies are dropped only after the build');
    const c = copies(build.body).join('\n');
    for (const f of ['package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src']) assert.ok(c.includes(f), `build stage copies ${f}`);
  });

  test('runtime stage takes production node_modules and dist from the build stage, plus skills and examples', () => {
    const c = copies(runtime.body);
    const fromBuild = c.filter((a) => a.includes(`--from=${build.name}`)).join('\n');
    assert.match(fromBuild, /\/node_modules\b/);
    assert.match(fromBuild, /\/dist\b/);
    const plain = c.filter((a) => !a.includes('--from=')).join('\n');
    for (const dir of ['package.json', 'skills', 'examples']) assert.match(plain, new RegExp(`(^|\\s)${dir}\\b`), `copies ${dir}`);
    assert.doesNotMatch(runs(runtime.body), /\b(g\+\+|make|python3)\b/, 'no compiler in the runtime image');
    assert.doesNotMatch(runs(runtime.body), /\bnpm (ci|install)\b/, 'dependencies come from the build stage');
  });

  test('runtime stage runs as a non-root user', () => {
    const users = runtime.body.filter((i) => i.op === 'USER').map((i) => i.args);
    const last = users.at(-1);
    assert.ok(last, 'USER is set in the final stage');
    assert.doesNotMatch(last, /^(root|0)(:|$)/);
  });

  test('image environment listens on all interfaces with tokens required and is a valid configuration', () => {
    const env = envOf(runtime.body);
    assert.equal(env.ONGRID_HTTP_HOST, '0.0.0.0');
    assert.ok(env.ONGRID_API_TOKENS_FILE, 'a non-loopback listener needs a tokens file');
    assert.equal(env.ONGRID_SKILLS_EXTERNAL_DIRS, '/etc/ongrid/skills');
    assert.equal(env.ONGRID_DATA_DIR, '/var/lib/ongrid');
    const known = new Set(fs.readFileSync(path.join(ROOT, 'src', 'config.ts'), 'utf8').match(/ONGRID_[A-Z_]+/g));
    for (const k of Object.keys(env).filter((n) => n.startsWith('ONGRID_'))) assert.ok(known.has(k), `${k} is not read by src/config.ts`);
    const config = loadConfig(env);
    assert.equal(config.dataDir, '/var/lib/ongrid');
    assert.equal(config.apiTokensFile, env.ONGRID_API_TOKENS_FILE);
  });

  test('declares volumes for skills and data and exposes the configured port', () => {
    const volumes = runtime.body.filter((i) => i.op === 'VOLUME').map((i) => i.args).join(' ');
    assert.ok(volumes.includes('"/etc/ongrid/skills"') || /(^|\s)\/etc\/ongrid\/skills(\s|$)/.test(volumes));
    assert.ok(volumes.includes(`"${envOf(runtime.body).ONGRID_DATA_DIR}"`), 'the data dir is a volume');
    const port = loadConfig(envOf(runtime.body)).httpPort;
    assert.match(only(runtime.body, 'EXPOSE'), new RegExp(`(^|\\s)${port}(/tcp)?(\\s|$)`));
    assert.match(runs(runtime.body), /chown[^\n]*node[^\n]*\/var\/lib\/ongrid/, 'the data dir is writable by the service user');
  });

  test('starts node in exec form on the build output, and stops on SIGTERM', () => {
    const cmd = JSON.parse(only(runtime.body, 'CMD')) as string[];
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(cmd.join(' '), pkg.scripts.start, 'CMD runs what `npm start` runs, without npm in between');
    assert.equal(only(runtime.body, 'STOPSIGNAL'), 'SIGTERM');
    const entry = runtime.body.filter((i) => i.op === 'ENTRYPOINT');
    // A shell-form entrypoint would swallow SIGTERM; exec form (or none) passes it on.
    for (const e of entry) assert.ok(Array.isArray(JSON.parse(e.args)), 'ENTRYPOINT in exec form');
  });
});

describe('Dockerfile HEALTHCHECK', () => {
  const hc = only(runtime.body, 'HEALTHCHECK');
  const m = /CMD (\[.*\])$/.exec(hc);
  assert.ok(m, 'HEALTHCHECK uses exec-form CMD (slim images have no curl)');
  const argv = JSON.parse(m[1]!) as string[];
  const servers: http.Server[] = [];
  after(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

  /** Runs the image's probe, with the image's node replaced by this one, against `port`. */
  function probe(port: number): Promise<number> {
    assert.equal(argv[0], 'node');
    return new Promise((resolve) => {
      execFile(process.execPath, argv.slice(1), { env: { ONGRID_HTTP_PORT: String(port) }, timeout: 15_000 }, (err) => {
        resolve(err ? (typeof err.code === 'number' ? err.code : -1) : 0);
      });
    });
  }

  async function serve(status: (url: string) => number): Promise<number> {
    const server = http.createServer((req, res) => {
      res.statusCode = status(req.url ?? '');
      res.end();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as AddressInfo).port;
  }

  test('passes when /healthz answers 200', async () => {
    const port = await serve((url) => (url === '/healthz' ? 200 : 404));
    assert.equal(await probe(port), 0);
  });

  test('fails when /healthz answers an error', async () => {
    const port = await serve(() => 503);
    assert.equal(await probe(port), 1);
  });

  test('fails when nothing listens', async () => {
    const port = await serve(() => 200);
    const s = servers.pop()!;
    await new Promise((r) => s.close(r));
    assert.equal(await probe(port), 1);
  });
});

describe('.dockerignore', () => {
  const patterns = fs
    .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  test('keeps local state, dependencies and secrets out of the build context', () => {
    for (const p of ['node_modules', 'dist', 'data', '.git', '.env', 'secrets']) assert.ok(patterns.includes(p), `ignores ${p}`);
  });

  test('ignores nothing the Dockerfile copies from the context', () => {
    const sources = all
      .flatMap((s) => copies(s.body))
      .filter((a) => !a.includes('--from='))
      .flatMap((a) => a.split(' ').filter((w) => !w.startsWith('--')).slice(0, -1));
    assert.ok(sources.length > 0);
    for (const src of sources) {
      const top = src.replace(/^\.\//, '').split('/')[0]!;
      assert.ok(!patterns.includes(top), `${top} is copied but ignored`);
    }
  });
});
