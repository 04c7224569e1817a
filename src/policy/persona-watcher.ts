/**
 * Hot reload of persona files: any *.md added, changed or removed in a persona folder (or a
 * folder appearing or vanishing) reloads the whole PersonaRegistry once things are quiet, so
 * a change applies to the next request. Reloading is cheap (a handful of small files) and
 * keeps one source of truth: the same loadPersonas as at boot.
 */
import fs from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from 'pino';
import type { PersonaRegistry } from './persona-registry.js';

/** Quiet time before a reload: a temp-file + rename save is one reload, read complete. */
export const PERSONA_SETTLE_MS = 100;
/** How often persona folders are checked for appearing or vanishing. */
export const PERSONA_DIR_POLL_MS = 250;

/** device:inode of the folder, or undefined when it is not one; a change means it was replaced. */
function folderIdentity(dir: string): string | undefined {
  try {
    const st = fs.statSync(dir);
    return st.isDirectory() ? `${st.dev}:${st.ino}` : undefined;
  } catch {
    return undefined;
  }
}

export function watchPersonas(
  dirs: string[],
  personas: PersonaRegistry,
  logger: Logger,
  pollMs: number,
): { ready: Promise<void>; close(): Promise<void> } {
  // Relative folders were refused (and logged) by the loader; nothing to watch there.
  const watched = [...new Set(dirs.filter((d) => path.isAbsolute(d)).map((d) => path.normalize(d)))];
  const present = new Map(watched.map((d) => [d, folderIdentity(d)]));
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const reloadSoon = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (closed) return;
      try {
        personas.reload();
        logger.info({ personas: personas.list().length }, 'persona loader: reloaded persona files');
      } catch (err) {
        logger.error({ err: (err as Error).message }, 'persona loader: reload failed, keeping the previous personas');
      }
    }, PERSONA_SETTLE_MS);
  };

  let watcher: FSWatcher | undefined;
  /** Watches `dir` too, creating the chokidar watcher on first use (chokidar over no paths never gets ready). */
  const watchDir = (dir: string): Promise<void> => {
    if (watcher) {
      watcher.add(dir);
      return Promise.resolve();
    }
    const w = watch(dir, {
      ignoreInitial: true,
      depth: 0, // persona files sit directly in their folder
      usePolling: pollMs > 0,
      ...(pollMs > 0 ? { interval: pollMs, binaryInterval: pollMs } : {}),
      atomic: false, // the settle delay below merges unlink + add
    });
    w.on('all', (event, p) => {
      if ((event === 'add' || event === 'change' || event === 'unlink') && p.endsWith('.md')) reloadSoon();
    });
    w.on('error', (err: unknown) => {
      logger.warn({ code: (err as NodeJS.ErrnoException).code }, `persona watcher: ${(err as Error).message}`);
    });
    watcher = w;
    return new Promise<void>((resolve) => w.once('ready', () => resolve()));
  };
  let stopWaiting = () => {};
  const ready = Promise.race([
    Promise.all(watched.filter((d) => present.get(d) !== undefined).map(watchDir)).then(() => undefined),
    // Closed before chokidar's first scan ended: `ready` must not stay pending forever.
    new Promise<void>((resolve) => (stopWaiting = resolve)),
  ]);
  // A poller compares against its first stat, taken just after `ready`: a save landing before
  // it would never show as a change. One reload after that closes the gap.
  if (pollMs > 0) void ready.then(reloadSoon);

  const dirPoll = setInterval(() => {
    for (const d of watched) {
      const now = folderIdentity(d);
      const before = present.get(d);
      if (now === before) continue;
      present.set(d, now);
      // Gone, or replaced by another folder renamed over it: the old watch follows the old one.
      if (before !== undefined) watcher?.unwatch(d);
      if (now !== undefined) void watchDir(d);
      reloadSoon();
    }
  }, pollMs > 0 ? Math.min(pollMs, 1000) : PERSONA_DIR_POLL_MS);
  dirPoll.unref();

  return {
    ready,
    async close() {
      closed = true;
      stopWaiting();
      clearTimeout(timer);
      clearInterval(dirPoll);
      await watcher?.close();
    },
  };
}
