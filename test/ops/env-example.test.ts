import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { loadConfig } from '../../src/config.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const exampleText = fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8');
const example = parseEnv(exampleText) as Record<string, string>;
const configNames = new Set(fs.readFileSync(path.join(ROOT, 'src', 'config.ts'), 'utf8').match(/ONGRID_[A-Z_]+/g));
const assignments = exampleText.split('\n').filter((l) => /^[A-Z_]+=/.test(l));

describe('.env.example', () => {
  test('lists every variable src/config.ts reads', () => {
    assert.ok(configNames.size >= 10, 'config.ts names were found');
    for (const name of configNames) assert.ok(name in example, `${name} missing`);
  });

  test('lists no variable src/config.ts does not know, and each once', () => {
    for (const name of Object.keys(example)) assert.ok(configNames.has(name), `${name} is unknown to config.ts`);
    assert.equal(assignments.length, Object.keys(example).length, 'a variable is assigned twice');
  });

  test('values are the defaults: loading it yields the same configuration as an empty environment', () => {
    assert.deepEqual(loadConfig(example), loadConfig({}));
    // dataDir is resolved to an absolute path, so the raw default is checked as written.
    assert.equal(example.ONGRID_DATA_DIR, './data');
  });

  test('an empty value stands only for a default that is empty in config.ts', () => {
    const source = fs.readFileSync(path.join(ROOT, 'src', 'config.ts'), 'utf8');
    for (const [name, value] of Object.entries(example).filter(([, v]) => v === '')) {
      const emptyDefault = new RegExp(`env\\.${name} \\?\\? ''|'${name}', ''`);
      assert.match(source, emptyDefault, `${name} has a non-empty default but .env.example leaves it empty`);
    }
  });

  test('each variable has a comment line right above it', () => {
    const lines = exampleText.split('\n');
    lines.forEach((line, i) => {
      if (/^[A-Z_]+=/.test(line)) assert.match(lines[i - 1] ?? '', /^# \S/, `no comment above ${line}`);
    });
  });
});
