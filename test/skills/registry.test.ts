import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { compareCodePoints, SkillRegistry } from '../../src/skills/registry.js';
import { compileSchema } from '../../src/skills/schema-compiler.js';
import type { ExternalSkill, NativeSkill } from '../../src/skills/types.js';

const compiled = compileSchema({ type: 'object', properties: {} });
assert.ok(compiled.ok);
const validate = compiled.validate;

/** An external skill snapshot as the loader would build it (`rel` is the pack folder). */
function ext(name: string, root: string, rel: string, description = 'd'): ExternalSkill {
  const dir = path.join(root, rel);
  return Object.freeze({
    source: 'external',
    name,
    description,
    class: 'safe',
    category: 'external',
    schema: { type: 'object', properties: {} },
    timeoutSeconds: 30,
    validate,
    available: true,
    manifestPath: path.join(dir, 'skill.json'),
    dir,
    entry: path.join(dir, 'run.sh'),
    root,
    rootReal: root,
    envAllow: [],
    manifestSha256: description,
  } satisfies ExternalSkill);
}

function native(name: string): NativeSkill {
  return Object.freeze({
    source: 'native',
    name,
    description: 'built in',
    class: 'safe',
    category: 'system',
    schema: { type: 'object', properties: {} },
    timeoutSeconds: 30,
    validate,
    available: true,
    impl: async () => ({}),
    specPath: `/app/skills/${name}/SKILL.md`,
  } satisfies NativeSkill);
}

const R1 = '/srv/r1';
const R2 = '/srv/r2';

describe('SkillRegistry: winners', () => {
  test('the first registered candidate of a name wins; later ones are skipped', () => {
    const reg = new SkillRegistry();
    const first = ext('disk_cleaner', R1, 'b');
    const second = ext('disk_cleaner', R1, 'a');
    assert.equal(reg.upsertExternal(first), 'registered');
    assert.equal(reg.upsertExternal(second), 'skipped_duplicate');
    assert.equal(reg.get('disk_cleaner'), first);
    assert.equal(reg.size, 1);
    // The skipped one stays known as a candidate.
    assert.deepEqual(reg.manifestPaths(), [second.manifestPath, first.manifestPath]);
  });

  test('list() returns winners sorted by code point, not by UTF-16 unit', () => {
    const reg = new SkillRegistry();
    for (const n of ['zeta', 'alpha', 'a_b', 'a1', 'beta']) reg.upsertExternal(ext(n, R1, n));
    reg.upsertExternal(ext('alpha', R1, 'zz')); // duplicate: not listed twice
    assert.deepEqual(reg.list().map((s) => s.name), ['a1', 'a_b', 'alpha', 'beta', 'zeta']);
    assert.equal(reg.size, 5);
  });

  test('compareCodePoints orders U+E000 before an astral character (JS default sort does not)', () => {
    const privateUse = '\uE000';
    const emoji = '\u{1F600}';
    assert.deepEqual([emoji, privateUse].sort(), [emoji, privateUse]);
    assert.deepEqual([emoji, privateUse].sort(compareCodePoints), [privateUse, emoji]);
    assert.ok(compareCodePoints('a', 'ab') < 0 && compareCodePoints('b', 'ab') > 0 && compareCodePoints('x', 'x') === 0);
  });

  test('an unknown name is undefined', () => {
    assert.equal(new SkillRegistry().get('nope'), undefined);
  });
});

describe('SkillRegistry: removal and promotion', () => {
  test('removing the winner promotes the skipped duplicate', () => {
    const reg = new SkillRegistry();
    const winner = ext('probe', R1, 'a');
    const dup = ext('probe', R1, 'b');
    reg.upsertExternal(winner);
    reg.upsertExternal(dup);
    assert.deepEqual(reg.removeByManifest(winner.manifestPath), { removed: winner, promoted: dup });
    assert.equal(reg.get('probe'), dup);
    assert.deepEqual(reg.removeByManifest(dup.manifestPath), { removed: dup });
    assert.equal(reg.get('probe'), undefined);
    assert.equal(reg.size, 0);
  });

  test('promotion follows root order, then lexical path order, not discovery order', () => {
    const reg = new SkillRegistry({ rootOrder: [R1, R2] });
    const winner = ext('probe', R2, 'a');
    reg.upsertExternal(winner);
    const inR2 = ext('probe', R2, 'b');
    const inR1Deep = ext('probe', R1, 'm/z');
    const inR1 = ext('probe', R1, 'm-a'); // per-folder order: "m" < "m-a", so m/z comes first
    for (const s of [inR2, inR1, inR1Deep]) assert.equal(reg.upsertExternal(s), 'skipped_duplicate');
    assert.equal(reg.removeByManifest(winner.manifestPath).promoted, inR1Deep);
    assert.equal(reg.removeByManifest(inR1Deep.manifestPath).promoted, inR1);
    assert.equal(reg.removeByManifest(inR1.manifestPath).promoted, inR2);
  });

  test('removing a skipped duplicate leaves the winner alone', () => {
    const reg = new SkillRegistry();
    const winner = ext('probe', R1, 'a');
    const dup = ext('probe', R1, 'b');
    reg.upsertExternal(winner);
    reg.upsertExternal(dup);
    assert.deepEqual(reg.removeByManifest(dup.manifestPath), { removed: dup });
    assert.equal(reg.get('probe'), winner);
  });

  test('removing an unknown manifest changes nothing', () => {
    const reg = new SkillRegistry();
    reg.upsertExternal(ext('probe', R1, 'a'));
    assert.deepEqual(reg.removeByManifest('/nowhere/skill.json'), {});
    assert.equal(reg.size, 1);
  });

  test('removeUnder drops a pack folder and promotes from outside it, never a victim', () => {
    const reg = new SkillRegistry({ rootOrder: [R1, R2] });
    const a = ext('probe', R1, 'pack');
    const aNested = ext('probe', R1, 'pack/inner');
    const other = ext('other', R1, 'pack/other');
    const sibling = ext('probe', R1, 'pack2'); // shares the string prefix, not the folder
    for (const s of [a, aNested, other, sibling]) reg.upsertExternal(s);
    const results = reg.removeUnder(path.join(R1, 'pack'));
    assert.deepEqual(results, [{ removed: aNested }, { removed: other }, { removed: a, promoted: sibling }]);
    assert.deepEqual(reg.list().map((s) => (s as ExternalSkill).manifestPath), [sibling.manifestPath]);
  });

  test('removeUnder of a whole root hands names to the next root', () => {
    const reg = new SkillRegistry({ rootOrder: [R1, R2] });
    const r1 = ext('probe', R1, 'x');
    const r2 = ext('probe', R2, 'x');
    reg.upsertExternal(r1);
    reg.upsertExternal(r2);
    assert.deepEqual(reg.removeUnder(R1), [{ removed: r1, promoted: r2 }]);
    assert.deepEqual(reg.removeUnder('/srv/none'), []);
  });
});

describe('SkillRegistry: edits', () => {
  test('an edit of the winner replaces it in place; the old snapshot is untouched', () => {
    const reg = new SkillRegistry();
    const v1 = ext('probe', R1, 'a', 'v1');
    reg.upsertExternal(v1);
    reg.upsertExternal(ext('probe', R1, 'b'));
    const v2 = ext('probe', R1, 'a', 'v2');
    assert.deepEqual(reg.upsert(v2), { action: 'reloaded', previous: v1 });
    assert.equal(reg.get('probe'), v2);
    assert.equal(v1.description, 'v1'); // a running execution holding v1 keeps it
    assert.equal(reg.manifestPaths().length, 2);
  });

  test('renaming the winner frees its old name for the duplicate and competes for the new one', () => {
    const reg = new SkillRegistry();
    const v1 = ext('probe', R1, 'a');
    const dup = ext('probe', R1, 'b');
    reg.upsertExternal(v1);
    reg.upsertExternal(dup);
    const renamed = ext('probe_two', R1, 'a');
    assert.deepEqual(reg.upsert(renamed), {
      action: 'registered',
      previous: v1,
      freed: { name: 'probe', promoted: dup },
    });
    assert.deepEqual([reg.get('probe'), reg.get('probe_two')], [dup, renamed]);
  });

  test('renaming the winner onto a taken name frees the old name and is skipped', () => {
    const reg = new SkillRegistry();
    const a = ext('alpha', R1, 'a');
    reg.upsertExternal(a);
    reg.upsertExternal(ext('beta', R1, 'b'));
    const r = reg.upsert(ext('beta', R1, 'a'));
    assert.deepEqual(r, { action: 'skipped_duplicate', previous: a, freed: { name: 'alpha' } });
    assert.equal(reg.get('alpha'), undefined);
  });

  test('a skipped duplicate edited to a free name is registered', () => {
    const reg = new SkillRegistry();
    reg.upsertExternal(ext('probe', R1, 'a'));
    const dup = ext('probe', R1, 'b');
    reg.upsertExternal(dup);
    assert.equal(reg.upsertExternal(ext('fresh', R1, 'b')), 'registered');
    assert.equal((reg.get('fresh') as ExternalSkill).manifestPath, dup.manifestPath);
    // Still a duplicate after an edit that keeps the taken name.
    assert.equal(reg.upsertExternal(ext('probe', R1, 'b')), 'skipped_duplicate');
  });
});

describe('SkillRegistry: natives and listeners', () => {
  test('a native skill takes precedence over an external one of the same name', () => {
    const reg = new SkillRegistry();
    const n = native('sys_info');
    reg.registerNative(n);
    const e = ext('sys_info', R1, 'a');
    assert.equal(reg.upsertExternal(e), 'skipped_duplicate');
    assert.equal(reg.get('sys_info'), n);
    assert.equal(reg.size, 1);
  });

  test('a native registered later shadows the external winner, which is never promoted over it', () => {
    const reg = new SkillRegistry();
    const e = ext('sys_info', R1, 'a');
    reg.upsertExternal(e);
    reg.registerNative(native('sys_info'));
    assert.equal(reg.get('sys_info')?.source, 'native');
    assert.deepEqual(reg.removeByManifest(e.manifestPath), { removed: e });
    assert.equal(reg.get('sys_info')?.source, 'native');
  });

  test('onChange fires on every change until unsubscribed; a throwing listener does not stop others', () => {
    const reg = new SkillRegistry();
    let calls = 0;
    reg.onChange(() => {
      throw new Error('broken listener');
    });
    const off = reg.onChange(() => calls++);
    const s = ext('probe', R1, 'a');
    reg.upsertExternal(s);
    reg.removeByManifest(s.manifestPath);
    reg.removeByManifest(s.manifestPath); // nothing to remove: no event
    assert.equal(calls, 2);
    off();
    reg.upsertExternal(s);
    assert.equal(calls, 2);
  });
});
