import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config.js';

test('defaults follow CONTRACT section 1', () => {
  const c = loadConfig({});
  assert.equal(c.skillsExternalDirs, '');
  assert.equal(c.skillsWatch, true);
  assert.equal(c.personasDirs, '');
  assert.equal(c.defaultPersona, 'default');
  assert.equal(c.httpHost, '127.0.0.1');
  assert.equal(c.httpPort, 8080);
  assert.equal(c.dataDir, path.resolve('./data'));
  assert.equal(c.apiTokensFile, '');
  assert.equal(c.maxConcurrentExecutions, 8);
  assert.equal(c.maxQueuedExecutions, 64);
  assert.equal(c.approvalTtlSeconds, 900);
  assert.equal(c.killGraceMs, 2000);
  assert.equal(c.logLevel, 'info');
  assert.equal(c.logFormat, 'json');
});

test('values are parsed and trimmed', () => {
  const c = loadConfig({ ONGRID_HTTP_PORT: ' 9090 ', ONGRID_SKILLS_WATCH: 'false', ONGRID_LOG_FORMAT: 'pretty', ONGRID_MAX_QUEUED_EXECUTIONS: '0' });
  assert.equal(c.httpPort, 9090);
  assert.equal(c.skillsWatch, false);
  assert.equal(c.logFormat, 'pretty');
  assert.equal(c.maxQueuedExecutions, 0);
});

test('an invalid value throws a ConfigError naming the variable, never a silent default', () => {
  const cases: Array<[string, string]> = [
    ['ONGRID_HTTP_PORT', 'abc'],
    ['ONGRID_HTTP_PORT', '70000'],
    ['ONGRID_MAX_CONCURRENT_EXECUTIONS', '0'],
    ['ONGRID_MAX_QUEUED_EXECUTIONS', '-1'],
    ['ONGRID_APPROVAL_TTL_SECONDS', '1.5'],
    ['ONGRID_KILL_GRACE_MS', '-5'],
    ['ONGRID_SKILLS_WATCH', 'maybe'],
    ['ONGRID_LOG_LEVEL', 'loud'],
    ['ONGRID_LOG_FORMAT', 'xml'],
    ['ONGRID_SKILLS_WATCH_POLL_MS', 'often'],
  ];
  for (const [name, value] of cases) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: unknown) => err instanceof ConfigError && err.variable === name && err.message.includes(name),
      `${name}=${value}`,
    );
  }
});
