/** Writes openapi/openapi.json from the route schemas (`npm run openapi`). A test keeps it in sync. */
import { writeFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/app.js';

export async function renderOpenApi(): Promise<string> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ongrid-openapi-'));
  const config = loadConfig({ ONGRID_DATA_DIR: dataDir });
  const { app, close } = await buildApp(config, pino({ level: 'silent' }));
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await close();
  return text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = path.resolve(import.meta.dirname, '..', 'openapi', 'openapi.json');
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, await renderOpenApi());
  process.stdout.write(`wrote ${out}\n`);
}
