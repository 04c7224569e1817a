import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkRequirements, evaluateRequirements, isOnPath } from '../../../src/skills/native/requirements.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ongrid-req-'));
const bin = path.join(tmp, 'bin');
fs.mkdirSync(bin);
fs.writeFileSync(path.join(bin, 'mytool'), '#!/bin/sh\n', { mode: 0o755 });
fs.writeFileSync(path.join(bin, 'notexec'), 'data', { mode: 0o644 });
fs.mkdirSync(path.join(bin, 'adir'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const host = (over: Partial<{ platform: string; bins: string[]; env: NodeJS.ProcessEnv }> = {}) => ({
  platform: over.platform ?? 'linux',
  env: over.env ?? {},
  hasBin: (b: string) => (over.bins ?? []).includes(b),
});

describe('native skill requirements', () => {
  test('no requirements: available, no reason', () => {
    assert.deepEqual(evaluateRequirements({ bins: [], config: [] }, host()), { available: true });
  });

  test('an os list without this platform makes it unavailable, naming both', () => {
    const a = evaluateRequirements({ os: ['darwin', 'win32'], bins: [], config: [] }, host({ platform: 'linux' }));
    assert.equal(a.available, false);
    assert.match(a.reason ?? '', /requires os darwin or win32 \(this host is linux\)/);
    assert.equal(evaluateRequirements({ os: ['linux'], bins: [], config: [] }, host()).available, true);
  });

  test('a missing executable is named in the reason', () => {
    const a = evaluateRequirements({ bins: ['kubectl', 'jq'], config: [] }, host({ bins: ['jq'] }));
    assert.equal(a.available, false);
    assert.match(a.reason ?? '', /"kubectl" on PATH/);
    assert.doesNotMatch(a.reason ?? '', /jq/);
  });

  test('an unset or blank config variable is named; a set one is fine', () => {
    const req = { bins: [], config: ['PROM_URL', 'TOKEN'] };
    const a = evaluateRequirements(req, host({ env: { PROM_URL: '  ', TOKEN: 'x' } }));
    assert.equal(a.available, false);
    assert.match(a.reason ?? '', /requires configuration PROM_URL to be set/);
    assert.equal(evaluateRequirements(req, host({ env: { PROM_URL: 'http://p', TOKEN: 'x' } })).available, true);
  });

  test('several unmet requirements are all reported in one reason', () => {
    const a = evaluateRequirements({ os: ['aix'], bins: ['nope'], config: ['X'] }, host());
    assert.equal(a.reason?.split('; ').length, 3);
  });

  test('PATH lookup finds executable files only, and never accepts a path as a bin name', () => {
    const env = { PATH: `/nonexistent${path.delimiter}${bin}` };
    assert.equal(isOnPath('mytool', env, 'linux'), true);
    assert.equal(isOnPath('notexec', env, 'linux'), false);
    assert.equal(isOnPath('adir', env, 'linux'), false);
    assert.equal(isOnPath('absent', env, 'linux'), false);
    assert.equal(isOnPath(path.join(bin, 'mytool'), env, 'linux'), false);
    assert.equal(isOnPath('mytool', {}, 'linux'), false);
  });

  test('checkRequirements looks at the real PATH it is given', () => {
    const req = { bins: ['mytool'], config: [] };
    assert.equal(checkRequirements(req, { PATH: bin }, process.platform).available, true);
    assert.equal(checkRequirements(req, { PATH: tmp }, process.platform).available, false);
  });
});
