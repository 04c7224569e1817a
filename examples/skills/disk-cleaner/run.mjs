#!/usr/bin/env node
// Deletes regular files older than `older_than_days` under `path`; with dry_run (default true)
// it deletes nothing and reports what it would free. Symlinks are never followed.
import { lstat, readdir, rm } from 'node:fs/promises';
import { join, isAbsolute, resolve } from 'node:path';

const input = await new Promise((res) => {
  let s = '';
  process.stdin.on('data', (d) => (s += d)).on('end', () => res(s || '{}'));
});
const { path, dry_run = true, older_than_days = 7 } = JSON.parse(input);
if (!isAbsolute(path) || resolve(path) === '/') {
  console.error(`refusing to clean ${path}: give an absolute path other than /`);
  process.exit(2);
}
const cutoff = Date.now() - older_than_days * 86_400_000;
let freed = 0;
let deleted = 0;

async function walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) await walk(p);
    else if (entry.isFile()) {
      const st = await lstat(p);
      if (st.mtimeMs < cutoff) {
        console.error(`${dry_run ? 'would delete' : 'deleting'} ${p} (${st.size} bytes)`);
        if (!dry_run) await rm(p);
        freed += st.size;
        deleted += 1;
      }
    }
  }
}
await walk(resolve(path));
process.stdout.write(JSON.stringify({ dry_run, freed_bytes: freed, files_deleted: dry_run ? 0 : deleted, files_matched: deleted }));
