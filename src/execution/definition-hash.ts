import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Skill } from '../skills/types.js';

/** Entry-file digests keyed by identity and change markers, so an unchanged binary is hashed once. */
const entryDigests = new Map<string, { key: string; digest: string }>();
const MAX_CACHED = 10_000;

async function fileSha256(file: string): Promise<string> {
  const st = await stat(file);
  const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const hit = entryDigests.get(file);
  if (hit && hit.key === key) return hit.digest;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  const digest = hash.digest('hex');
  if (entryDigests.size >= MAX_CACHED) entryDigests.clear();
  entryDigests.set(file, { key, digest });
  return digest;
}

/**
 * What an approval binds to: the manifest as loaded and the entry file's content now.
 * An entry that cannot be read hashes as "missing" (the run then fails with spawn_failed).
 */
export async function definitionHash(skill: Skill): Promise<string> {
  const h = createHash('sha256');
  if (skill.source === 'external') {
    h.update(`external\0${skill.manifestSha256}\0`);
    h.update(await fileSha256(skill.entry).catch(() => 'missing'));
  } else {
    h.update(`native\0${skill.name}\0${skill.specPath}\0${JSON.stringify(skill.schema)}\0${skill.class}`);
  }
  return h.digest('hex');
}
