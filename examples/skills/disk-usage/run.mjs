#!/usr/bin/env node
// Skill protocol: JSON args on stdin, one JSON object on stdout, log lines on stderr.
import { statfs } from 'node:fs/promises';

const args = JSON.parse(await new Promise((resolve) => {
  let s = '';
  process.stdin.on('data', (d) => (s += d)).on('end', () => resolve(s || '{}'));
}));
const path = args.path ?? '/';
console.error(`inspecting ${path}`);
const st = await statfs(path);
const total = st.blocks * st.bsize;
const free = st.bavail * st.bsize;
process.stdout.write(JSON.stringify({
  path,
  total_bytes: total,
  free_bytes: free,
  used_bytes: total - st.bfree * st.bsize,
  used_percent: total ? Math.round(((total - free) / total) * 1000) / 10 : 0,
}));
