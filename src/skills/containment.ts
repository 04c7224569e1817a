import { realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * True when `childReal` lies strictly below `rootReal` (both already realpaths).
 * Uses path.relative, never a string prefix: `/srv/skills-evil` is not under `/srv/skills`,
 * and the root itself is not "under" itself.
 */
export function isStrictlyUnder(childReal: string, rootReal: string): boolean {
  const rel = path.relative(rootReal, childReal);
  if (rel === '' || path.isAbsolute(rel)) return false;
  // `..foo` is a legal name inside the root; only a whole `..` segment climbs out.
  return rel !== '..' && !rel.startsWith(`..${path.sep}`);
}

export type Containment =
  | { ok: true; real: string }
  | { ok: false; reason: 'not_found'; error: string }
  | { ok: false; reason: 'escapes'; real: string };

/**
 * Resolves `target` through every symlink and checks it lies strictly under `rootReal`.
 * Shared by the loader (at load time) and the runner (again at spawn time, because the
 * disk may have changed since).
 */
export async function checkContained(target: string, rootReal: string): Promise<Containment> {
  let real: string;
  try {
    real = await realpath(target);
  } catch (err) {
    return { ok: false, reason: 'not_found', error: (err as NodeJS.ErrnoException).code ?? 'error' };
  }
  return isStrictlyUnder(real, rootReal) ? { ok: true, real } : { ok: false, reason: 'escapes', real };
}
