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

function isDir(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
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
  const present = new Map(watched.map((d) => [d, isDir(d)]));
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
  let ready: Promise<void> = Promise.resolve();
  if (watched.length > 0) {
    // chokidar watches the folders that exist now; the poll below re-adds one that (re)appears.
    watcher = watch(
      watched.filter((d) => present.get(d)),
      {
        ignoreInitial: true,
        depth: 0,
        usePolling: pollMs > 0,
        ...(pollMs > 0 ? { interval: pollMs, binaryInterval: pollMs } : {}),
        atomic: false,
      },
    );
    watcher.on('all', (event, p) => {
      if ((event === 'add' || event === 'change' || event === 'unlink') && p.endsWith('.md')) reloadSoon();
    });
    watcher.on('error', (err: unknown) => {
      logger.warn({ code: (err as NodeJS.ErrnoException).code }, `persona watcher: ${(err as Error).message}`);
    });
    const w = watcher;
    ready = new Promise<void>((resolve) => w.once('ready', () => resolve()));
  }

  const dirPoll = setInterval(() => {
    for (const d of watched) {
      const now = isDir(d);
      if (now === present.get(d)) continue;
      present.set(d, now);
      if (now) watcher?.add(d);
      else watcher?.unwatch(d);
      reloadSoon();
    }
  }, pollMs > 0 ? Math.min(pollMs, 1000) : PERSONA_DIR_POLL_MS);
  dirPoll.unref();

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(dirPoll);
      await watcher?.close();
    },
  };
}
