import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { startApp, tempDir } from '../helpers/app.js';

test('readyz is 503 until the initial load has finished, then 200', async () => {
  const { app, start, close } = await buildApp(loadConfig({ ONGRID_DATA_DIR: tempDir() }), pino({ level: 'silent' }));
  try {
    const before = await app.inject('/readyz');
    assert.equal(before.statusCode, 503);
    assert.equal(before.json().error.code, 'not_ready');
    assert.equal((await app.inject('/healthz')).statusCode, 200);
    await start();
    assert.equal((await app.inject('/readyz')).statusCode, 200);
  } finally {
    await close();
  }
});

test('openapi/openapi.json in the repo is identical to what the service serves (run `npm run openapi`)', async () => {
  const t = await startApp();
  try {
    const served = (await t.app.inject('/openapi.json')).json();
    const file = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'openapi', 'openapi.json'), 'utf8'));
    assert.deepEqual(file, served);
    assert.ok(served.paths['/v1/skills'], 'the spec documents the catalog');
    assert.ok(served.components.schemas.Execution, 'shared schemas are components');
  } finally {
    await t.close();
  }
});

test('the docs UI is served without a token', async () => {
  const t = await startApp();
  try {
    const r = await t.app.inject('/docs/');
    assert.equal(r.statusCode, 200);
    assert.match(r.headers['content-type'] as string, /text\/html/);
  } finally {
    await t.close();
  }
});
