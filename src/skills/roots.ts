import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BaseLogger } from 'pino';

/** What the loader needs from a logger; pino and Fastify's logger both fit. */
export type LoaderLogger = Pick<BaseLogger, 'info' | 'warn' | 'debug'>;

/** An allow-list root as configured (normalized) and its realpath, which containment uses. */
export interface RootInfo {
  root: string;
  rootReal: string;
}

/** Splits ONGRID_SKILLS_EXTERNAL_DIRS on `:` and `,`; entries trimmed, empty ones dropped. */
export function parseRoots(value: string): string[] {
  return value
    .split(/[:,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Drops trailing separators so joined manifest paths read cleanly (`/a/` -> `/a`). */
export function normalizeRoot(root: string): string {
  const n = path.normalize(root);
  return n.length > 1 && n.endsWith(path.sep) ? n.slice(0, -1) : n;
}

export type RootCheck =
  | { ok: true; info: RootInfo }
  | { ok: false; msg: string; reason: string };

/** Checks one configured root; on failure `msg` is the exact log message. */
export async function resolveRoot(configured: string): Promise<RootCheck> {
  if (!path.isAbsolute(configured)) {
    return { ok: false, msg: `skill loader: skip non-absolute dir ${JSON.stringify(configured)}`, reason: 'not absolute' };
  }
  const notPresent = `skill loader: dir ${configured} not present, skipping`;
  const root = normalizeRoot(configured);
  try {
    // stat follows symlinks: a root that is a link to a folder is a folder.
    const st = await stat(root);
    if (!st.isDirectory()) return { ok: false, msg: notPresent, reason: 'not a directory' };
    return { ok: true, info: { root, rootReal: await realpath(root) } };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, msg: notPresent, reason: code === 'ENOENT' ? 'does not exist' : (code ?? 'unreadable') };
  }
}

/** Resolves the configured roots in order, logging one line per skipped root. */
export async function resolveRoots(roots: string[], logger: LoaderLogger): Promise<RootInfo[]> {
  const out: RootInfo[] = [];
  for (const configured of roots) {
    const check = await resolveRoot(configured);
    if (!check.ok) {
      logger.warn({ dir: configured, reason: check.reason }, check.msg);
      continue;
    }
    if (out.some((r) => r.root === check.info.root)) {
      logger.debug({ dir: configured }, `skill loader: dir ${configured} configured twice, walking it once`);
      continue;
    }
    out.push(check.info);
  }
  return out;
}
