/**
 * `npm run demo`: the service on the bundled example skills and personas, with data in
 * ./data/demo. Any ONGRID_* variable already set wins, so `ONGRID_HTTP_PORT=9090 npm run demo` works.
 */
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const defaults: Record<string, string> = {
  ONGRID_SKILLS_EXTERNAL_DIRS: path.join(root, 'examples', 'skills'),
  ONGRID_PERSONAS_DIRS: path.join(root, 'examples', 'personas'),
  ONGRID_DATA_DIR: path.join(root, 'data', 'demo'),
  ONGRID_LOG_FORMAT: process.stdout.isTTY ? 'pretty' : 'json',
};
for (const [k, v] of Object.entries(defaults)) process.env[k] ??= v;

process.stderr.write(
  `ongrid-skills demo: http://${process.env.ONGRID_HTTP_HOST ?? '127.0.0.1'}:${process.env.ONGRID_HTTP_PORT ?? '8080'}/v1/skills ` +
    `(API docs at /docs)\n`,
);
await import('../src/main.js');
