#!/usr/bin/env node
import { readdir, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

const input = await new Promise((res) => {
  let s = '';
  process.stdin.on('data', (d) => (s += d)).on('end', () => res(s || '{}'));
});
const { path } = JSON.parse(input);
if (!isAbsolute(path) || resolve(path) === '/') {
  console.error(`refusing to purge ${path}: give an absolute path other than /`);
  process.exit(2);
}
const entries = await readdir(path);
for (const name of entries) {
  console.error(`removing ${join(path, name)}`);
  await rm(join(path, name), { recursive: true, force: true });
}
process.stdout.write(JSON.stringify({ path, entries_removed: entries.length }));
