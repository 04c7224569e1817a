import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isToolAllowed, matchesToolPattern } from '../../src/policy/tool-patterns.js';

describe('matchesToolPattern', () => {
  const cases: Array<[string, string, boolean]> = [
    ['disk_usage', 'disk_usage', true],
    ['disk_usage', 'disk_usage_2', false],
    ['disk_usage', 'disk', false],
    ['probe_*', 'probe_net', true],
    ['probe_*', 'probe_', true],
    ['probe_*', 'net_probe', false],
    ['*_cleaner', 'disk_cleaner', true],
    ['*_cleaner', 'disk_cleaner_v2', false],
    ['*', 'anything', true],
    ['*disk*', 'big_disk_report', true],
    ['*disk*', 'memory', false],
    ['a*b', 'a_b', false], // an inner * is literal, and no skill name contains one
    ['a*b', 'a*b', true],
  ];
  for (const [pattern, skill, expected] of cases) {
    test(`"${pattern}" ${expected ? 'matches' : 'does not match'} "${skill}"`, () => {
      assert.equal(matchesToolPattern(pattern, skill), expected);
    });
  }
});

describe('isToolAllowed', () => {
  test('empty tools allows every skill', () => {
    assert.equal(isToolAllowed({ tools: [], disallowed_tools: [] }, 'whatever'), true);
  });

  test('a non-empty tools list allows only what it matches', () => {
    const p = { tools: ['query_*', 'disk_usage'], disallowed_tools: [] };
    assert.equal(isToolAllowed(p, 'query_users'), true);
    assert.equal(isToolAllowed(p, 'disk_usage'), true);
    assert.equal(isToolAllowed(p, 'disk_cleaner'), false);
  });

  test('disallowed_tools wins over tools, also over an explicit name', () => {
    const p = { tools: ['disk_cleaner', 'query_*'], disallowed_tools: ['disk_cleaner', '*_drop'] };
    assert.equal(isToolAllowed(p, 'disk_cleaner'), false);
    assert.equal(isToolAllowed(p, 'query_drop'), false);
    assert.equal(isToolAllowed(p, 'query_users'), true);
  });

  test('disallowed_tools alone denies its matches and allows the rest', () => {
    const p = { tools: [], disallowed_tools: ['*_cleaner'] };
    assert.equal(isToolAllowed(p, 'disk_cleaner'), false);
    assert.equal(isToolAllowed(p, 'disk_usage'), true);
  });

  test('disallowed "*" denies everything', () => {
    assert.equal(isToolAllowed({ tools: ['*'], disallowed_tools: ['*'] }, 'disk_usage'), false);
  });
});
