/**
 * Persona routes and persona files over HTTP (CONTRACT sections 7 and 12): listing, one persona
 * with its per-skill access, 404, malformed files skipped with a log line, and the bundled
 * examples/personas.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startApp, tempDir, writeSkill, type TestApp } from '../helpers/app.js';

interface Res {
  status: number;
  body: any;
}

async function listen(app: TestApp): Promise<(method: string, url: string, headers?: Record<string, string>) => Promise<Res>> {
  const base = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return async (method, url, headers = {}) => {
    const res = await fetch(base + url, { method, headers });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function mkdir(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}

function writePersona(dir: string, file: string, text: string): string {
  const p = path.join(dir, file);
  fs.writeFileSync(p, text);
  return p;
}

const PERSONA_KEYS = ['description', 'disallowed_tools', 'name', 'permission_mode', 'tools'];

describe('persona routes', () => {
  let app: TestApp;
  let call: Awaited<ReturnType<typeof listen>>;
  const bad: Record<string, string> = {};

  before(async () => {
    const root = mkdir('ongrid-pers-skills-');
    writeSkill(root, { name: 'probe_disk', script: `echo '{}'` });
    writeSkill(root, { name: 'restart_service', script: `echo '{}'`, manifest: { class: 'mutating' } });
    writeSkill(root, { name: 'wipe_disk', script: `echo '{}'`, manifest: { class: 'dangerous' } });
    writeSkill(root, { name: 'disk_cleaner', script: `echo '{}'`, manifest: { class: 'mutating' } });

    const pdir = mkdir('ongrid-pers-a-');
    const pdir2 = mkdir('ongrid-pers-b-');
    writePersona(pdir, 'zeta.md', '---\nname: zeta\ndescription: Zeta reader\npermission_mode: read-only\n---\nNotes for humans.\n');
    writePersona(
      pdir,
      'sre.md',
      '---\nname: sre\ndescription: Senior on-call\npermission_mode: dual-sign-required\ndisallowed_tools: ["*_cleaner"]\n---\n',
    );
    writePersona(
      pdir,
      'alpha.md',
      '---\nname: alpha\ndescription: Alpha operator\npermission_mode: mutating-with-confirm\ntools: ["probe_*", restart_service, wipe_disk]\n---\n',
    );
    // Malformed files: each is skipped with a log line naming the file; none blocks the start.
    bad.noFrontmatter = writePersona(pdir, 'b-nofront.md', 'name: nofront\npermission_mode: read-only\n');
    bad.badYaml = writePersona(pdir, 'b-yaml.md', '---\nname: [unclosed\npermission_mode: read-only\n---\n');
    bad.badMode = writePersona(pdir, 'b-mode.md', '---\nname: wild\npermission_mode: anything-goes\n---\n');
    bad.noName = writePersona(pdir, 'b-noname.md', '---\ndescription: nameless\npermission_mode: read-only\n---\n');
    bad.unclosed = writePersona(pdir, 'b-unclosed.md', '---\nname: open\npermission_mode: read-only\n');
    bad.badTools = writePersona(pdir, 'b-tools.md', '---\nname: badtools\npermission_mode: read-only\ntools: {a: 1}\n---\n');
    // Not a persona file at all: ignored.
    writePersona(pdir, 'README.txt', 'not a persona');
    // Same name in a later dir: the first one wins.
    bad.duplicate = writePersona(pdir2, 'zeta.md', '---\nname: zeta\ndescription: shadowed\npermission_mode: dual-sign-required\n---\n');

    app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: `${pdir}:${pdir2}` });
    call = await listen(app);
  });
  after(async () => {
    await app.close();
    fs.rmSync(app.dataDir, { recursive: true, force: true });
  });

  test('GET /v1/personas lists every valid persona and the built-in default, sorted by name, with total', async () => {
    const res = await call('GET', '/v1/personas');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.items.map((p: { name: string }) => p.name),
      ['alpha', 'default', 'sre', 'zeta'],
    );
    assert.equal(res.body.total, 4);
    for (const p of res.body.items) assert.deepEqual(Object.keys(p).sort(), PERSONA_KEYS, 'no internal fields such as the file path');
    const alpha = res.body.items[0];
    assert.deepEqual(alpha, {
      name: 'alpha',
      description: 'Alpha operator',
      permission_mode: 'mutating-with-confirm',
      tools: ['probe_*', 'restart_service', 'wipe_disk'],
      disallowed_tools: [],
    });
    const def = res.body.items[1];
    assert.equal(def.permission_mode, 'read-only');
    assert.deepEqual(def.tools, []);
  });

  test('the first definition of a name wins over a later dir', async () => {
    const res = await call('GET', '/v1/personas/zeta');
    assert.equal(res.body.description, 'Zeta reader');
    assert.equal(res.body.permission_mode, 'read-only');
    assert.ok(app.logs.messages().some((m) => m.includes('"zeta"') && m.includes(bad.duplicate!)));
  });

  test('GET /v1/personas/{name} shows, for every skill, whether it runs, needs approval or is forbidden', async () => {
    const res = await call('GET', '/v1/personas/sre');
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'sre');
    assert.equal(res.body.permission_mode, 'dual-sign-required');
    assert.deepEqual(res.body.disallowed_tools, ['*_cleaner']);
    const skills = Object.fromEntries(res.body.skills.map((s: { name: string }) => [s.name, s]));
    assert.deepEqual(skills.probe_disk, { name: 'probe_disk', access: 'runs', approvals_required: 0 });
    assert.deepEqual(skills.restart_service, { name: 'restart_service', access: 'needs_approval', approvals_required: 1 });
    assert.deepEqual(skills.wipe_disk, { name: 'wipe_disk', access: 'needs_approval', approvals_required: 2 });
    assert.deepEqual(skills.disk_cleaner, { name: 'disk_cleaner', access: 'forbidden', approvals_required: 0 });
    const names = res.body.skills.map((s: { name: string }) => s.name);
    assert.deepEqual(names, [...names].sort(), 'skills sorted by name');
  });

  test('the per-skill access matches what executing answers', async () => {
    const res = await call('GET', '/v1/personas/alpha');
    const skills = Object.fromEntries(res.body.skills.map((s: { name: string; access: string }) => [s.name, s]));
    assert.deepEqual(skills.probe_disk, { name: 'probe_disk', access: 'runs', approvals_required: 0 });
    assert.deepEqual(skills.restart_service, { name: 'restart_service', access: 'needs_approval', approvals_required: 1 });
    assert.equal(skills.wipe_disk.access, 'forbidden', 'dangerous is not permitted to mutating-with-confirm');
    assert.equal(skills.disk_cleaner.access, 'forbidden', 'not in the tools list');

    const post = (skill: string) => call('POST', `/v1/skills/${skill}/execute`, { 'x-ongrid-persona': 'alpha' });
    assert.equal((await post('probe_disk')).status, 200);
    assert.equal((await post('restart_service')).status, 202);
    assert.equal((await post('wipe_disk')).body.error.code, 'class_not_permitted');
    assert.equal((await post('disk_cleaner')).body.error.code, 'skill_not_allowed');
  });

  test('the read-only default forbids every non-safe skill', async () => {
    const res = await call('GET', '/v1/personas/default');
    assert.equal(res.status, 200);
    const access = Object.fromEntries(res.body.skills.map((s: { name: string; access: string }) => [s.name, s.access]));
    assert.equal(access.probe_disk, 'runs');
    assert.equal(access.restart_service, 'forbidden');
    assert.equal(access.wipe_disk, 'forbidden');
  });

  test('an unknown persona name is 404 persona_not_found', async () => {
    const res = await call('GET', '/v1/personas/nobody');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'persona_not_found');
  });

  test('malformed persona files are skipped with a log line each and never block the start', async () => {
    assert.equal((await call('GET', '/readyz')).status, 200);
    const messages = app.logs.messages();
    for (const [what, file] of Object.entries(bad)) {
      assert.equal(messages.filter((m) => m.includes(file)).length, 1, `one log line for ${what} (${file})`);
    }
    for (const name of ['nofront', 'wild', 'open', 'badtools']) {
      assert.equal((await call('GET', `/v1/personas/${name}`)).status, 404, name);
    }
    const badMode = messages.find((m) => m.includes(bad.badMode!));
    assert.match(badMode!, /permission_mode/);
    assert.ok(!messages.some((m) => m.includes('README.txt')), 'non-.md files are not persona files');
  });
});

describe('bundled example personas', () => {
  test('examples/personas load and gate the example skills as documented', async () => {
    const examples = path.resolve(import.meta.dirname, '..', '..', 'examples');
    const app = await startApp({
      ONGRID_SKILLS_EXTERNAL_DIRS: path.join(examples, 'skills'),
      ONGRID_PERSONAS_DIRS: path.join(examples, 'personas'),
    });
    try {
      const call = await listen(app);
      const list = await call('GET', '/v1/personas');
      const modes = Object.fromEntries(list.body.items.map((p: { name: string; permission_mode: string }) => [p.name, p.permission_mode]));
      assert.deepEqual(modes, {
        default: 'read-only',
        observer: 'read-only',
        operator: 'mutating-with-confirm',
        sre: 'dual-sign-required',
      });
      assert.ok(!app.logs.messages().some((m) => m.startsWith('persona loader: skip')), 'every example file is valid');

      const accessOf = async (persona: string) => {
        const r = await call('GET', `/v1/personas/${persona}`);
        return Object.fromEntries(r.body.skills.map((s: { name: string; access: string; approvals_required: number }) => [s.name, `${s.access}/${s.approvals_required}`]));
      };
      const observer = await accessOf('observer');
      assert.equal(observer.disk_usage, 'runs/0');
      assert.equal(observer.disk_cleaner, 'forbidden/0');
      const operator = await accessOf('operator');
      assert.equal(operator.disk_cleaner, 'needs_approval/1');
      assert.equal(operator.purge_directory, 'forbidden/0');
      const sre = await accessOf('sre');
      assert.equal(sre.purge_directory, 'needs_approval/2');
    } finally {
      await app.close();
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });
});
