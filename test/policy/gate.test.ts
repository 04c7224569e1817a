import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type GateDecision } from '../../src/policy/gate.js';
import { DEFAULT_PERSONA, type PermissionMode, type Persona } from '../../src/policy/personas.js';
import { isToolAllowed } from '../../src/policy/tool-patterns.js';
import type { SkillClass } from '../../src/skills/types.js';

function persona(mode: PermissionMode, extra: Partial<Persona> = {}): Persona {
  return { name: `p_${mode}`, description: '', permission_mode: mode, tools: [], disallowed_tools: [], source: 'builtin', ...extra };
}

// CONTRACT section 7, row by row: [mode, class, access, approvals_required].
const MATRIX: Array<[PermissionMode, SkillClass, GateDecision['access'], number]> = [
  ['read-only', 'safe', 'runs', 0],
  ['read-only', 'mutating', 'forbidden', 0],
  ['read-only', 'dangerous', 'forbidden', 0],
  ['mutating-with-confirm', 'safe', 'runs', 0],
  ['mutating-with-confirm', 'mutating', 'needs_approval', 1],
  ['mutating-with-confirm', 'dangerous', 'forbidden', 0],
  ['dual-sign-required', 'safe', 'runs', 0],
  ['dual-sign-required', 'mutating', 'needs_approval', 1],
  ['dual-sign-required', 'dangerous', 'needs_approval', 2],
];

describe('gate: permission mode x skill class', () => {
  for (const [mode, cls, access, approvals] of MATRIX) {
    test(`${mode} + ${cls} skill → ${access}${access === 'needs_approval' ? ` (${approvals})` : ''}`, () => {
      const d = decide(persona(mode), { name: 'some_skill', class: cls });
      assert.equal(d.access, access);
      assert.equal(d.approvals_required, approvals);
      if (d.access === 'forbidden') {
        assert.equal(d.code, 'class_not_permitted');
        assert.match(d.message, new RegExp(`"p_${mode}"`));
        assert.match(d.message, /"some_skill"/);
        assert.match(d.message, new RegExp(`${mode}.*${cls}`));
      }
    });
  }
});

describe('gate: tools lists are checked before the class', () => {
  test('a skill outside the allow list is skill_not_allowed even when its class would run', () => {
    const d = decide(persona('dual-sign-required', { name: 'ops', tools: ['probe_*'] }), { name: 'disk_cleaner', class: 'safe' });
    assert.equal(d.access, 'forbidden');
    assert.equal(d.approvals_required, 0);
    assert.ok(d.access === 'forbidden' && d.code === 'skill_not_allowed');
    assert.equal(d.message, 'persona "ops" may not call skill "disk_cleaner": it is not in its tools list');
  });

  test('a disallowed skill is skill_not_allowed, not class_not_permitted, and the message names the pattern', () => {
    const d = decide(persona('read-only', { name: 'viewer', disallowed_tools: ['*_cleaner'] }), { name: 'disk_cleaner', class: 'dangerous' });
    assert.ok(d.access === 'forbidden');
    assert.equal(d.code, 'skill_not_allowed');
    assert.equal(d.message, 'persona "viewer" may not call skill "disk_cleaner": it matches "*_cleaner" in disallowed_tools');
  });

  test('an allowed skill falls through to the class rule', () => {
    const d = decide(persona('mutating-with-confirm', { tools: ['disk_*'] }), { name: 'disk_cleaner', class: 'mutating' });
    assert.deepEqual(d, { access: 'needs_approval', approvals_required: 1 });
  });

  test('the built-in default persona runs safe skills and forbids the rest by class', () => {
    assert.deepEqual(decide(DEFAULT_PERSONA, { name: 'x', class: 'safe' }), { access: 'runs', approvals_required: 0 });
    const d = decide(DEFAULT_PERSONA, { name: 'x', class: 'mutating' });
    assert.ok(d.access === 'forbidden' && d.code === 'class_not_permitted');
  });

  test('decide and isToolAllowed agree on which skills the lists allow', () => {
    const p = persona('dual-sign-required', { tools: ['probe_*', 'disk_usage', '*_report'], disallowed_tools: ['probe_secret*'] });
    for (const name of ['probe_net', 'probe_secret_keys', 'disk_usage', 'disk_cleaner', 'weekly_report', 'x']) {
      const d = decide(p, { name, class: 'safe' });
      assert.equal(d.access !== 'forbidden', isToolAllowed(p, name), name);
    }
  });
});
