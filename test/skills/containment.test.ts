import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkContained, isStrictlyUnder } from '../../src/skills/containment.js';

describe('isStrictlyUnder (pure path rule)', () => {
  const cases: Array<[string, string, string, boolean]> = [
    ['a file directly in the root', '/srv/skills/run.sh', '/srv/skills', true],
    ['a file deep in the root', '/srv/skills/a/b/c/run.sh', '/srv/skills', true],
    ['a name starting with two dots is still inside', '/srv/skills/..hidden', '/srv/skills', true],
    ['the root itself is not under itself', '/srv/skills', '/srv/skills', false],
    ['a sibling sharing the prefix is outside', '/srv/skills-evil/run.sh', '/srv/skills', false],
    ['the parent is outside', '/srv', '/srv/skills', false],
    ['an unrelated path is outside', '/tmp/escape.sh', '/srv/skills', false],
    ['everything but / itself is under /', '/tmp/x', '/', true],
  ];
  for (const [title, child, root, expected] of cases) {
    test(title, () => assert.equal(isStrictlyUnder(child, root), expected));
  }
});

describe('checkContained (realpath on disk)', () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-containment-')));
  after(() => fs.rmSync(base, { recursive: true, force: true }));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(root, 'pack'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(root, 'pack', 'run.sh'), '#!/bin/sh\n');
  fs.writeFileSync(path.join(outside, 'evil.sh'), '#!/bin/sh\n');
  fs.symlinkSync(path.join(outside, 'evil.sh'), path.join(root, 'pack', 'link-out.sh'));
  fs.symlinkSync(path.join(root, 'pack', 'run.sh'), path.join(root, 'pack', 'link-in.sh'));
  fs.symlinkSync(path.join(root, 'pack', 'gone.sh'), path.join(root, 'pack', 'dangling.sh'));

  test('a file inside the root is contained and reports its realpath', async () => {
    assert.deepEqual(await checkContained(path.join(root, 'pack', 'run.sh'), root), {
      ok: true,
      real: path.join(root, 'pack', 'run.sh'),
    });
  });

  test('a symlink inside the root pointing inside is contained at its target', async () => {
    assert.deepEqual(await checkContained(path.join(root, 'pack', 'link-in.sh'), root), {
      ok: true,
      real: path.join(root, 'pack', 'run.sh'),
    });
  });

  test('a symlink inside the root pointing outside escapes, reporting the target', async () => {
    assert.deepEqual(await checkContained(path.join(root, 'pack', 'link-out.sh'), root), {
      ok: false,
      reason: 'escapes',
      real: path.join(outside, 'evil.sh'),
    });
  });

  test('a `..` path climbing out of the root escapes', async () => {
    const r = await checkContained(path.join(root, 'pack', '..', '..', 'outside', 'evil.sh'), root);
    assert.deepEqual(r, { ok: false, reason: 'escapes', real: path.join(outside, 'evil.sh') });
  });

  test('a missing file and a dangling symlink are not found', async () => {
    for (const p of [path.join(root, 'pack', 'nope.sh'), path.join(root, 'pack', 'dangling.sh')]) {
      assert.deepEqual(await checkContained(p, root), { ok: false, reason: 'not_found', error: 'ENOENT' });
    }
  });
});
