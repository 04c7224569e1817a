/**
 * Persona gating over HTTP (CONTRACT section 7): the permission_mode x class matrix, the
 * tools / disallowed_tools lists with wildcards, unknown personas and the default persona.
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

async function listen(app: TestApp): Promise<(method: string, url: string, opts?: { headers?: Record<string, string>; body?: unknown }) => Promise<Res>> {
  const base = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return async (method, url, opts = {}) => {
    const res = await fetch(base + url, {
      method,
      headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

function persona(dir: string, file: string, frontmatter: string): void {
  fs.writeFileSync(path.join(dir, file), `---\n${frontmatter}\n---\nbody\n`);
}

/** A skill of the given class that appends one line to runs.log in its folder per run. */
function countingSkill(root: string, name: string, cls: string): string {
  return writeSkill(root, { name, script: 'echo run >> runs.log\necho \'{"ok":true}\'', manifest: { class: cls } });
}

function runsOf(dir: string): number {
  const f = path.join(dir, 'runs.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length : 0;
}

const tmp: string[] = [];
after(() => {
  for (const d of tmp) fs.rmSync(d, { recursive: true, force: true });
});

function mkdir(prefix: string): string {
  const d = tempDir(prefix);
  tmp.push(d);
  return d;
}

const CLASS_SKILL = { safe: 'probe_safe', mutating: 'change_mutating', dangerous: 'wipe_dangerous' } as const;
type Cls = keyof typeof CLASS_SKILL;
type Mode = 'read-only' | 'mutating-with-confirm' | 'dual-sign-required';
const MODE_PERSONA: Record<Mode, string> = {
  'read-only': 'reader',
  'mutating-with-confirm': 'confirmer',
  'dual-sign-required': 'dualsigner',
};

/** CONTRACT section 7 table: approvals needed, or 'forbidden'. */
const EXPECTED: Record<Mode, Record<Cls, number | 'forbidden'>> = {
  'read-only': { safe: 0, mutating: 'forbidden', dangerous: 'forbidden' },
  'mutating-with-confirm': { safe: 0, mutating: 1, dangerous: 'forbidden' },
  'dual-sign-required': { safe: 0, mutating: 1, dangerous: 2 },
};

describe('permission_mode x class matrix over HTTP', () => {
  let app: TestApp;
  let call: Awaited<ReturnType<typeof listen>>;
  const skillDirs: Record<string, string> = {};

  before(async () => {
    const root = mkdir('ongrid-gate-skills-');
    const pdir = mkdir('ongrid-gate-personas-');
    for (const cls of Object.keys(CLASS_SKILL) as Cls[]) skillDirs[cls] = countingSkill(root, CLASS_SKILL[cls], cls);
    for (const [mode, name] of Object.entries(MODE_PERSONA)) {
      persona(pdir, `${name}.md`, `name: ${name}\ndescription: ${mode} persona\npermission_mode: ${mode}`);
    }
    app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: pdir });
    call = await listen(app);
  });
  after(async () => {
    await app.close();
    fs.rmSync(app.dataDir, { recursive: true, force: true });
  });

  for (const mode of Object.keys(EXPECTED) as Mode[]) {
    for (const cls of Object.keys(CLASS_SKILL) as Cls[]) {
      const rule = EXPECTED[mode][cls];
      const what = rule === 'forbidden' ? '403 class_not_permitted' : rule === 0 ? '200 succeeded' : `202 pending_approval (${rule} approvals)`;
      test(`${mode} persona calling a ${cls} skill answers ${what}`, async () => {
        const skill = CLASS_SKILL[cls];
        const before = runsOf(skillDirs[cls]!);
        const res = await call('POST', `/v1/skills/${skill}/execute`, {
          headers: { 'x-ongrid-persona': MODE_PERSONA[mode], 'x-ongrid-subject': 'requester' },
          body: { args: {} },
        });
        if (rule === 'forbidden') {
          assert.equal(res.status, 403);
          assert.equal(res.body.error.code, 'class_not_permitted');
          assert.equal(runsOf(skillDirs[cls]!), before, 'a forbidden call never runs the child');
          return;
        }
        assert.equal(res.body.persona, MODE_PERSONA[mode]);
        assert.equal(res.body.class, cls);
        if (rule === 0) {
          assert.equal(res.status, 200);
          assert.equal(res.body.status, 'succeeded');
          assert.deepEqual(res.body.result, { ok: true });
          assert.equal(res.body.approvals_required, 0);
          assert.equal(runsOf(skillDirs[cls]!), before + 1);
          return;
        }
        assert.equal(res.status, 202);
        assert.equal(res.body.status, 'pending_approval');
        assert.equal(res.body.approvals_required, rule);
        assert.deepEqual(res.body.approvals, []);
        const events = await call('GET', `/v1/executions/${res.body.id}/events`);
        assert.equal(events.status, 200);
        const types = events.body.items.map((e: { type: string }) => e.type);
        assert.equal(types[0], 'created');
        assert.ok(types.includes('approval_requested'), `events: ${types.join(',')}`);
        assert.ok(!types.includes('started'), 'a parked execution has not started');
        assert.equal(runsOf(skillDirs[cls]!), before, 'a parked execution never runs the child');
      });
    }
  }

  test('an unknown persona answers 400 unknown_persona, before the skill is even looked up', async () => {
    const known = await call('POST', '/v1/skills/probe_safe/execute', { headers: { 'x-ongrid-persona': 'nobody' } });
    assert.equal(known.status, 400);
    assert.equal(known.body.error.code, 'unknown_persona');
    const unknownSkill = await call('POST', '/v1/skills/no_such_skill/execute', { headers: { 'x-ongrid-persona': 'nobody' } });
    assert.equal(unknownSkill.status, 400);
    assert.equal(unknownSkill.body.error.code, 'unknown_persona');
  });

  test('without X-Ongrid-Persona the built-in default persona is read-only', async () => {
    const safe = await call('POST', '/v1/skills/probe_safe/execute');
    assert.equal(safe.status, 200);
    assert.equal(safe.body.persona, 'default');
    assert.equal(safe.body.status, 'succeeded');
    const mutating = await call('POST', '/v1/skills/change_mutating/execute');
    assert.equal(mutating.status, 403);
    assert.equal(mutating.body.error.code, 'class_not_permitted');
    const dangerous = await call('POST', '/v1/skills/wipe_dangerous/execute');
    assert.equal(dangerous.status, 403);
    assert.equal(dangerous.body.error.code, 'class_not_permitted');
  });

  test('a forbidden call leaves no execution behind', async () => {
    const before = await call('GET', '/v1/executions?skill=wipe_dangerous&limit=500');
    const res = await call('POST', '/v1/skills/wipe_dangerous/execute', { headers: { 'x-ongrid-persona': 'confirmer' } });
    assert.equal(res.status, 403);
    const afterList = await call('GET', '/v1/executions?skill=wipe_dangerous&limit=500');
    assert.equal(afterList.body.total, before.body.total);
  });
});

describe('tools and disallowed_tools over HTTP', () => {
  let app: TestApp;
  let call: Awaited<ReturnType<typeof listen>>;

  before(async () => {
    const root = mkdir('ongrid-tools-skills-');
    const pdir = mkdir('ongrid-tools-personas-');
    for (const name of ['probe_disk', 'probe_secret', 'disk_cleaner', 'cache_cleaner', 'uptime', 'hostname', 'reboot_host']) {
      writeSkill(root, { name, script: `echo '{"skill":"${name}"}'` });
    }
    persona(
      pdir,
      'scoped.md',
      [
        'name: scoped',
        'description: tools by prefix, suffix and exact name',
        'permission_mode: dual-sign-required',
        'tools: ["probe_*", "*_cleaner", "uptime"]',
        'disallowed_tools: [probe_secret, "cache_*"]',
      ].join('\n'),
    );
    persona(
      pdir,
      'denylist.md',
      ['name: denylist', 'description: everything but reboots', 'permission_mode: read-only', 'disallowed_tools: ["*_host"]'].join('\n'),
    );
    app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: pdir });
    call = await listen(app);
  });
  after(async () => {
    await app.close();
    fs.rmSync(app.dataDir, { recursive: true, force: true });
  });

  async function exec(personaName: string, skill: string): Promise<Res> {
    return call('POST', `/v1/skills/${skill}/execute`, { headers: { 'x-ongrid-persona': personaName } });
  }

  test('a prefix* entry in tools allows matching skills', async () => {
    const res = await exec('scoped', 'probe_disk');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result, { skill: 'probe_disk' });
  });

  test('a *suffix entry in tools allows matching skills', async () => {
    const res = await exec('scoped', 'disk_cleaner');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result, { skill: 'disk_cleaner' });
  });

  test('an exact name in tools allows that skill', async () => {
    const res = await exec('scoped', 'uptime');
    assert.equal(res.status, 200);
  });

  test('a skill matching no tools entry answers 403 skill_not_allowed', async () => {
    const res = await exec('scoped', 'hostname');
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'skill_not_allowed');
  });

  test('disallowed_tools wins over tools (exact name against prefix*)', async () => {
    const res = await exec('scoped', 'probe_secret');
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'skill_not_allowed');
  });

  test('disallowed_tools wins over tools (prefix* against *suffix)', async () => {
    const res = await exec('scoped', 'cache_cleaner');
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'skill_not_allowed');
  });

  test('an empty tools list allows everything disallowed_tools does not match', async () => {
    assert.equal((await exec('denylist', 'hostname')).status, 200);
    const denied = await exec('denylist', 'reboot_host');
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'skill_not_allowed');
  });

  test('an unknown skill is 404 skill_not_found even when the persona would not allow it', async () => {
    const res = await exec('scoped', 'no_such_skill');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'skill_not_found');
  });
});

describe('ONGRID_DEFAULT_PERSONA', () => {
  const root = mkdir('ongrid-defp-skills-');
  const pdir = mkdir('ongrid-defp-personas-');
  countingSkill(root, 'change_mutating', 'mutating');
  countingSkill(root, 'probe_safe', 'safe');
  persona(pdir, 'confirmer.md', 'name: confirmer\ndescription: confirm\npermission_mode: mutating-with-confirm');

  test('a request naming no persona acts as ONGRID_DEFAULT_PERSONA', async () => {
    const app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: pdir, ONGRID_DEFAULT_PERSONA: 'confirmer' });
    try {
      const call = await listen(app);
      const res = await call('POST', '/v1/skills/change_mutating/execute');
      assert.equal(res.status, 202);
      assert.equal(res.body.persona, 'confirmer');
      assert.equal(res.body.status, 'pending_approval');
      assert.equal(res.body.approvals_required, 1);
      // The built-in default still exists and can be named explicitly.
      const explicit = await call('POST', '/v1/skills/change_mutating/execute', { headers: { 'x-ongrid-persona': 'default' } });
      assert.equal(explicit.status, 403);
      assert.equal(explicit.body.error.code, 'class_not_permitted');
    } finally {
      await app.close();
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });

  test('an ONGRID_DEFAULT_PERSONA that names no persona answers 400 unknown_persona', async () => {
    const app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: pdir, ONGRID_DEFAULT_PERSONA: 'ghost' });
    try {
      const call = await listen(app);
      const res = await call('POST', '/v1/skills/probe_safe/execute');
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'unknown_persona');
    } finally {
      await app.close();
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });

  test('a persona file named default replaces the built-in one', async () => {
    const own = mkdir('ongrid-defp-own-');
    persona(own, 'default.md', 'name: default\ndescription: site default\npermission_mode: mutating-with-confirm');
    const app = await startApp({ ONGRID_SKILLS_EXTERNAL_DIRS: root, ONGRID_PERSONAS_DIRS: own });
    try {
      const call = await listen(app);
      const res = await call('POST', '/v1/skills/change_mutating/execute');
      assert.equal(res.status, 202);
      assert.equal(res.body.persona, 'default');
      assert.equal(res.body.approvals_required, 1);
    } finally {
      await app.close();
      fs.rmSync(app.dataDir, { recursive: true, force: true });
    }
  });
});
