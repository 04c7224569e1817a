import type { Dirent } from 'node:fs';
import { constants, open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { buildExternalSkill, type BuildResult, MANIFEST_MAX_BYTES, parseMessage, tooLargeMessage } from './manifest.js';
import { compareCodePoints, type SkillRegistry, type UpsertAction } from './registry.js';
import { resolveRoots, type LoaderLogger, type RootInfo } from './roots.js';
import type { ExternalSkill } from './types.js';

export { parseRoots, resolveRoot, resolveRoots } from './roots.js';
export type { LoaderLogger as Logger, RootInfo } from './roots.js';

export const MANIFEST_NAME = 'skill.json';
/** Folders deeper than this below a root are not walked. */
export const MAX_WALK_DEPTH = 32;
/** Folders visited per root before the walk gives up (symlink fan-out could explode). */
export const MAX_WALK_DIRS = 50_000;

// --- loader error counter (exported as a metric by the caller) -------------------------------

let loaderErrors = 0;

/** Manifests that failed to load (parse or build) since the process started, boot and reloads. */
export function loaderErrorCount(): number {
  return loaderErrors;
}

// --- exact log lines, shared with the watcher ------------------------------------------------

/** Logs what the registry did with a freshly loaded skill, with the contract's messages. */
export function logUpsert(logger: LoaderLogger, skill: ExternalSkill, action: UpsertAction): void {
  const fields = { skill: skill.name, manifest: skill.manifestPath, action };
  if (action === 'skipped_duplicate') {
    logger.info(fields, `skill loader: skill "${skill.name}" already registered, skipping ${skill.manifestPath}`);
  } else {
    const verb = action === 'reloaded' ? 'reloaded' : 'registered';
    logger.info(fields, `skill loader: ${verb} subprocess skill "${skill.name}" from ${skill.manifestPath}`);
  }
}

/** Logs a skill leaving the catalog (its manifest was removed or became invalid). */
export function logUnregistered(logger: LoaderLogger, skill: ExternalSkill): void {
  logger.info(
    { skill: skill.name, manifest: skill.manifestPath, action: 'unregistered' },
    `skill loader: unregistered subprocess skill "${skill.name}" from ${skill.manifestPath}`,
  );
}

/** Logs a manifest that could not be loaded, from loadManifestFile's failure. */
export function logLoadFailure(logger: LoaderLogger, manifestPath: string, failure: { msg: string; skill?: string }): void {
  const fields = failure.skill === undefined ? { manifest: manifestPath } : { manifest: manifestPath, skill: failure.skill };
  logger.warn(fields, failure.msg);
}

// --- walking ---------------------------------------------------------------------------------

/**
 * Yields every `skill.json` under the root in lexical order (each folder's entries sorted
 * by code point, depth first), following symlinked folders. A folder already on the current
 * path (by realpath) is a loop and is not entered again.
 */
export async function* walkManifests(root: RootInfo, logger: LoaderLogger): AsyncGenerator<string> {
  const budget = { dirs: MAX_WALK_DIRS, warned: false };
  yield* walkDir(root.root, 0, new Set([root.rootReal]), budget, logger);
}

async function* walkDir(
  dir: string,
  depth: number,
  ancestors: Set<string>,
  budget: { dirs: number; warned: boolean },
  logger: LoaderLogger,
): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    logger.warn({ dir, code }, `skill loader: cannot read dir ${dir} (${code}), skipping`);
    return;
  }
  entries.sort((a, b) => compareCodePoints(a.name, b.name));

  for (const e of entries) {
    const full = path.join(dir, e.name);
    let isDir = e.isDirectory();
    let isFile = e.isFile();
    if (e.isSymbolicLink()) {
      const st = await stat(full).catch(() => undefined);
      // A dangling skill.json link is still a manifest: loading it logs why it failed.
      isFile = st ? st.isFile() : e.name === MANIFEST_NAME;
      isDir = st?.isDirectory() ?? false;
    }
    if (isFile) {
      if (e.name === MANIFEST_NAME) yield full;
      continue;
    }
    if (!isDir) continue;

    if (depth + 1 > MAX_WALK_DEPTH) {
      logger.warn({ dir: full }, `skill loader: dir ${full} is deeper than ${MAX_WALK_DEPTH} levels, not walked`);
      continue;
    }
    if (budget.dirs <= 0) {
      if (!budget.warned) logger.warn({ dir: full }, `skill loader: more than ${MAX_WALK_DIRS} dirs under one root, walk stopped at ${full}`);
      budget.warned = true;
      return;
    }
    const real = await realpath(full).catch(() => undefined);
    if (real === undefined || ancestors.has(real)) continue;
    budget.dirs--;
    ancestors.add(real);
    yield* walkDir(full, depth + 1, ancestors, budget, logger);
    ancestors.delete(real);
  }
}

// --- one manifest ----------------------------------------------------------------------------

type ReadResult = { ok: true; bytes: Buffer } | { ok: false; msg: string };

/** Reads a manifest, refusing one over the size limit without reading it whole. */
async function readManifestBytes(manifestPath: string): Promise<ReadResult> {
  let fh;
  try {
    // O_NONBLOCK: a FIFO named skill.json must not hang the loader.
    fh = await open(manifestPath, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return { ok: false, msg: parseMessage(manifestPath, `cannot read file (${(err as NodeJS.ErrnoException).code ?? 'error'})`) };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { ok: false, msg: parseMessage(manifestPath, 'not a regular file') };
    if (st.size > MANIFEST_MAX_BYTES) return { ok: false, msg: tooLargeMessage(manifestPath, st.size) };
    // Read at most limit+1 bytes: the file may grow between stat and read.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const { bytesRead, buffer } = await fh.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, null);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > MANIFEST_MAX_BYTES) return { ok: false, msg: tooLargeMessage(manifestPath, total) };
    }
    return { ok: true, bytes: Buffer.concat(chunks, total) };
  } catch (err) {
    return { ok: false, msg: parseMessage(manifestPath, `cannot read file (${(err as NodeJS.ErrnoException).code ?? 'error'})`) };
  } finally {
    await fh.close();
  }
}

/**
 * Loads one manifest found under `root` (boot walk or watcher event). On failure `msg` is
 * the exact log message (plus `skill`, the name as written, for build errors); the caller
 * logs it with logLoadFailure. Every failure is counted in loaderErrorCount().
 */
export async function loadManifestFile(
  manifestPath: string,
  root: RootInfo,
): Promise<BuildResult> {
  const read = await readManifestBytes(manifestPath);
  const result = read.ok ? await buildExternalSkill(read.bytes, manifestPath, root) : read;
  if (!result.ok) loaderErrors++;
  return result;
}

// --- boot ------------------------------------------------------------------------------------

/**
 * The initial load: resolves the roots, walks them in the configured order, loads every
 * manifest into the registry (one log line each), then logs the summary line.
 */
export async function loadAll(
  roots: string[],
  registry: SkillRegistry,
  logger: LoaderLogger,
): Promise<{ registered: number; errors: number }> {
  registry.setRootOrder(roots);
  const infos = await resolveRoots(roots, logger);
  let registered = 0;
  let errors = 0;
  // Nested roots reach the same file twice; the first root owns it.
  const seen = new Set<string>();
  for (const root of infos) {
    for await (const manifestPath of walkManifests(root, logger)) {
      if (seen.has(manifestPath)) continue;
      seen.add(manifestPath);
      const loaded = await loadManifestFile(manifestPath, root);
      if (!loaded.ok) {
        logLoadFailure(logger, manifestPath, loaded);
        errors++;
        continue;
      }
      const action = registry.upsertExternal(loaded.skill);
      logUpsert(logger, loaded.skill, action);
      if (action === 'registered') registered++;
    }
  }
  logger.info({ registered, errors }, `skill loader: ${registered} subprocess skills registered`);
  return { registered, errors };
}
