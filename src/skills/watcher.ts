/**
 * Hot reload (CONTRACT section 3): keeps the registry equal to the skill.json files on disk.
 *
 * chokidar events are hints, not facts: each one marks a path dirty, and once the path has
 * been quiet for SETTLE_MS it is compared with the disk (a manifest is read and hashed, a
 * folder is walked like at boot) and the registry is brought in line. So temp-file + rename,
 * partial writes, folder moves, rsync and symlink swaps all end in the same place, whatever
 * sequence of events chokidar happened to report. Unchanged bytes are never reloaded.
 *
 * chokidar watches folders and manifests only; any other file changing shows up as activity
 * in its folder (chokidar's `raw` event), which re-checks that folder's manifest, notices
 * packs that vanished below it, and retries manifests refused for a missing entry.
 * After `ready`, a catch-up walk picks up what changed while the watches were being set up.
 * Absent roots are polled for; a root that goes away (or is replaced) takes its skills with it.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import {
  loadManifestFile,
  logLoadFailure,
  logUnregistered,
  logUpsert,
  MANIFEST_NAME,
  MAX_WALK_DEPTH,
  walkManifests,
  type Logger,
} from './loader.js';
import { buildExternalSkill, MANIFEST_MAX_BYTES, type BuildResult } from './manifest.js';
import { compareCodePoints, type RemoveResult, type SkillRegistry } from './registry.js';
import { normalizeRoot, resolveRoot, type RootInfo } from './roots.js';
import type { ExternalSkill } from './types.js';

export interface SkillWatcherOptions {
  /** Raw configured roots, as for loadAll. */
  roots: string[];
  registry: SkillRegistry;
  logger: Logger;
  /** 0 = native filesystem events; otherwise chokidar polls every pollMs (network filesystems). */
  pollMs: number;
}

export interface SkillWatcher {
  /** Resolves once every present root is being watched. */
  ready: Promise<void>;
  /** Stops watching; no registry change happens after it resolves. */
  close(): Promise<void>;
}

/** A path must be quiet this long before it is read: lets renames and multi-write saves land. */
export const SETTLE_MS = 100;
/** ...but a path that never goes quiet (a pack folder with a busy log file) is read after this. */
export const MAX_SETTLE_MS = 400;
/** How often absent roots are checked for, and present ones for having vanished. */
export const ROOT_POLL_MS = 250;
/** Files read, folders walked and manifests built at once (500 packs copied in at once). */
const IO_CONCURRENCY = 16;

// --- pure rules ------------------------------------------------------------------------------

/** True when `p` is `dir` or lies below it (lexically). */
export function isAtOrUnder(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!path.isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${path.sep}`));
}

/** Build failures that another file can fix (the entry appearing, a link retargeted). */
export function isEntryFailure(msg: string): boolean {
  return /^skill loader: build "(?:[^"\\]|\\.)*": entry /.test(msg);
}

/** Boot order of two paths under the same root: path segments compared by code point. */
export function comparePaths(a: string, b: string): number {
  const sa = a.split(path.sep);
  const sb = b.split(path.sep);
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const c = compareCodePoints(sa[i] as string, sb[i] as string);
    if (c !== 0) return c;
  }
  return sa.length - sb.length;
}

interface Dirty {
  /** Something happened to this path itself: compare it (file or folder) with the disk. */
  path: boolean;
  /** Something happened inside this folder: check its skill.json and retry entry failures above. */
  activity: boolean;
  first: number;
  last: number;
}

/**
 * Dirty paths waiting to settle. Pure bookkeeping; the clock is passed in. An event below a
 * dirty folder keeps the folder waiting too, so a pack being copied is read once, complete.
 */
export class SettleQueue {
  private readonly items = new Map<string, Dirty>();

  constructor(
    private readonly settleMs = SETTLE_MS,
    private readonly maxSettleMs = MAX_SETTLE_MS,
  ) {}

  get size(): number {
    return this.items.size;
  }

  touch(p: string, kind: 'path' | 'activity', now: number): void {
    const cur = this.items.get(p);
    if (cur) {
      cur.last = now;
      cur[kind] = true;
    } else {
      this.items.set(p, { path: kind === 'path', activity: kind === 'activity', first: now, last: now });
    }
    for (let dir = path.dirname(p), depth = 0; depth <= MAX_WALK_DEPTH + 1; dir = path.dirname(dir), depth++) {
      const parent = this.items.get(dir);
      if (parent) parent.last = now;
      if (path.dirname(dir) === dir) break;
    }
  }

  private dueAt(d: Dirty): number {
    return Math.min(d.last + this.settleMs, d.first + this.maxSettleMs);
  }

  /** When the earliest entry is due, or undefined when empty. */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const d of this.items.values()) {
      const at = this.dueAt(d);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  /** Removes and returns every entry due at `now`. */
  takeDue(now: number): Array<{ path: string; dirty: Dirty }> {
    const out: Array<{ path: string; dirty: Dirty }> = [];
    for (const [p, d] of this.items) {
      if (this.dueAt(d) <= now) {
        out.push({ path: p, dirty: d });
        this.items.delete(p);
      }
    }
    return out;
  }

  clear(): void {
    this.items.clear();
  }
}

// --- the I/O shell ---------------------------------------------------------------------------

interface RootState {
  /** Normalized configured root; manifest paths start with it. */
  root: string;
  rank: number;
  /** Set while the root exists. */
  info?: RootInfo;
  /** device:inode of the folder it resolves to, to notice a folder renamed over it. */
  ident?: string;
  watcher?: FSWatcher;
  settleReady?: () => void;
}

/** What to do about one manifest path, decided from the disk (see Watcher.plan). */
type Plan =
  | { do: 'nothing' }
  | { do: 'remove' }
  | { do: 'apply'; loaded: BuildResult; sha: string | undefined; quiet: boolean };

type Snapshot = { kind: 'gone' } | { kind: 'other' } | { kind: 'file'; bytes?: Buffer; sha?: string };

async function identity(dir: string): Promise<string | undefined> {
  const st = await stat(dir).catch(() => undefined);
  return st ? `${st.dev}:${st.ino}` : undefined;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** What is at a manifest path now: a hash of its bytes when it is a readable regular file. */
async function snapshotManifest(p: string): Promise<Snapshot> {
  const st = await stat(p).catch(() => undefined);
  if (!st) return { kind: 'gone' };
  // A folder named skill.json is walked, not loaded (as at boot).
  if (st.isDirectory()) return { kind: 'other' };
  // Not a regular file, or too large: no hash, so the loader is asked and logs why.
  if (!st.isFile() || st.size > MANIFEST_MAX_BYTES) return { kind: 'file' };
  try {
    const bytes = await readFile(p);
    return { kind: 'file', bytes, sha: sha256(bytes) };
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? { kind: 'gone' } : { kind: 'file' };
  }
}

class Watcher implements SkillWatcher {
  readonly ready: Promise<void>;
  private readonly roots: RootState[] = [];
  private readonly queue = new SettleQueue();
  /** Manifest paths that are registry candidates (registered or skipped duplicates). */
  private readonly candidates: Set<string>;
  /** Manifest paths whose last load failed: the bytes' hash, the message, whether we logged it. */
  private readonly failed = new Map<string, { sha: string | undefined; msg: string; logged: boolean }>();
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private flushQueued = false;
  private rootCheckQueued = false;
  private readonly rootPoll: NodeJS.Timeout;
  private closed = false;
  private readonly registry: SkillRegistry;
  private readonly logger: Logger;
  private readonly pollMs: number;

  constructor(opts: SkillWatcherOptions) {
    this.registry = opts.registry;
    this.logger = opts.logger;
    this.pollMs = opts.pollMs;
    this.candidates = new Set(opts.registry.manifestPaths());

    // Relative roots were refused at boot (and logged); the same root twice is watched once.
    for (const configured of opts.roots) {
      if (!path.isAbsolute(configured)) continue;
      const root = normalizeRoot(configured);
      if (!this.roots.some((r) => r.root === root)) this.roots.push({ root, rank: this.roots.length });
    }
    this.ready = this.start();
    this.rootPoll = setInterval(() => this.enqueueRootCheck(), this.pollMs > 0 ? Math.min(this.pollMs, 1000) : ROOT_POLL_MS);
    this.rootPoll.unref();
    this.logger.info(
      { roots: this.roots.map((r) => r.root), poll_ms: this.pollMs },
      `skill watcher: watching ${this.roots.length} dirs (${this.pollMs > 0 ? `polling every ${this.pollMs} ms` : 'native events'})`,
    );
  }

  private async start(): Promise<void> {
    const waits: Promise<void>[] = [];
    // On the chain, so the root poll cannot see a root half set up.
    await this.enqueue(async () => {
      for (const r of this.roots) {
        const check = await resolveRoot(r.root);
        if (!check.ok) continue; // absent: the root poll picks it up when it appears
        r.info = check.info;
        r.ident = await identity(r.root);
        waits.push(this.watchRoot(r));
      }
    });
    await Promise.all(waits);
    // Catch up on what changed between the boot walk and the watches being in place (and,
    // when polling, before each poller took its first stat, which it compares against). It
    // runs after `ready`: anything changed later is an event, whichever side of it it lands.
    void this.enqueue(async () => {
      for (const r of this.roots) if (r.info && !this.closed) await this.reconcileDir(r.root, { catchUp: true });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return this.chain;
    this.closed = true;
    clearInterval(this.rootPoll);
    clearTimeout(this.timer);
    this.queue.clear();
    await Promise.all(this.roots.map((r) => this.unwatchRoot(r)));
    await this.chain;
  }

  // --- chokidar ------------------------------------------------------------------------------

  /** Starts chokidar on one root; resolves when its initial scan is done. */
  private watchRoot(r: RootState): Promise<void> {
    const w = watch(r.root, {
      ignoreInitial: true, // the boot load (or the reconcile after `ready`) already read it all
      followSymlinks: true,
      depth: MAX_WALK_DEPTH,
      // Only folders and manifests get watches; other files show up as folder activity (raw).
      ignored: (p, st) => st?.isFile() === true && path.basename(p) !== MANIFEST_NAME,
      usePolling: this.pollMs > 0,
      ...(this.pollMs > 0 ? { interval: this.pollMs, binaryInterval: this.pollMs } : {}),
      // Our own settle delay merges unlink+add; chokidar's would only add latency.
      atomic: false,
      awaitWriteFinish: false,
    });
    r.watcher = w;
    w.on('all', (event, p) => {
      if (event === 'add' || event === 'change' || event === 'unlink' || event === 'addDir' || event === 'unlinkDir') {
        this.touch(p, 'path');
      }
    });
    // fs.watch: (event, name, {watchedPath}); polling: (event, fullPath, {curr, prev}).
    w.on('raw', (_event, p, details) => {
      const watchedPath = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
      const where = typeof watchedPath === 'string' ? watchedPath : p;
      if (path.isAbsolute(where)) this.touch(where, 'activity');
    });
    const warned = new Set<string>();
    w.on('error', (err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      if (warned.has(code)) return;
      warned.add(code);
      const hint = code === 'ENOSPC' || code === 'EMFILE' ? ' (raise fs.inotify.max_user_watches or set ONGRID_SKILLS_WATCH_POLL_MS)' : '';
      this.logger.warn({ dir: r.root, code }, `skill watcher: cannot watch part of ${r.root} (${code})${hint}`);
    });
    return new Promise<void>((resolve) => {
      w.once('ready', () => resolve());
      // A watcher closed before its first scan ends must not leave `ready` pending forever.
      r.settleReady = resolve;
    });
  }

  private async unwatchRoot(r: RootState): Promise<void> {
    const w = r.watcher;
    r.watcher = undefined;
    r.settleReady?.();
    await w?.close().catch(() => undefined);
  }

  private touch(p: string, kind: 'path' | 'activity'): void {
    if (this.closed) return;
    this.queue.touch(p, kind, Date.now());
    this.arm();
  }

  private arm(): void {
    if (this.timer || this.flushQueued || this.closed) return;
    const due = this.queue.nextDue();
    if (due === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushQueued = true;
      void this.enqueue(async () => {
        this.flushQueued = false;
        const batch = this.queue.takeDue(Date.now());
        if (batch.length > 0) await this.processBatch(batch);
      });
    }, Math.max(0, due - Date.now()));
  }

  /**
   * Every registry change runs on one chain, so batches and root changes never interleave.
   * Resolves when `work` is done (or skipped because the watcher closed); never rejects.
   */
  private enqueue(work: () => Promise<void>): Promise<void> {
    this.chain = this.chain
      .then(() => (this.closed ? undefined : work()))
      .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'skill watcher: reload failed'))
      .finally(() => this.arm());
    return this.chain;
  }

  // --- roots appearing and vanishing ---------------------------------------------------------

  private enqueueRootCheck(): void {
    if (this.rootCheckQueued || this.closed) return;
    this.rootCheckQueued = true;
    void this.enqueue(async () => {
      this.rootCheckQueued = false;
      await this.checkRoots();
    });
  }

  private async checkRoots(): Promise<void> {
    for (const r of this.roots) {
      if (this.closed) return;
      const check = await resolveRoot(r.root);
      const ident = check.ok ? await identity(r.root) : undefined;
      if (!r.info) {
        if (!check.ok) continue;
        r.info = check.info;
        r.ident = ident;
        this.logger.info({ dir: r.root }, `skill watcher: dir ${r.root} appeared, loading it`);
        void this.watchRoot(r).then(() => this.touch(r.root, 'path'));
      } else if (!check.ok) {
        this.logger.warn({ dir: r.root, reason: check.reason }, `skill watcher: dir ${r.root} is gone (${check.reason}), unregistering its skills`);
        r.info = undefined;
        await this.unwatchRoot(r);
        this.removeAt(r.root);
      } else if (check.info.rootReal !== r.info.rootReal || ident !== r.ident) {
        // The root was swapped (a symlink pointed elsewhere, a folder renamed over it): the
        // watches follow the old folder, so watch the new one and re-read it all.
        this.logger.info({ dir: r.root, real: check.info.rootReal }, `skill watcher: dir ${r.root} was replaced, reloading it`);
        r.info = check.info;
        r.ident = ident;
        await this.unwatchRoot(r);
        void this.watchRoot(r).then(() => this.touch(r.root, 'path'));
      }
    }
  }

  /** The root that owns a path: the first configured, present root it lies under (as at boot). */
  private ownerOf(p: string): RootState | undefined {
    return this.roots.find((r) => r.info !== undefined && isAtOrUnder(p, r.root));
  }

  // --- reconciling ---------------------------------------------------------------------------

  private async processBatch(batch: Array<{ path: string; dirty: Dirty }>): Promise<void> {
    const owned = batch.filter((b) => this.ownerOf(b.path) !== undefined);
    const touched = owned.filter((b) => b.dirty.path).map((b) => b.path);
    const stats = await mapLimit(touched, IO_CONCURRENCY, (p) => stat(p).catch(() => undefined));
    const present: Array<{ p: string; rank: number; dir: boolean }> = [];
    touched.forEach((p, i) => {
      const st = stats[i];
      const rank = this.ownerOf(p)?.rank ?? 0;
      // Removals first: a pack moved to a new folder is unregistered, then registered again
      // (not skipped as a duplicate of itself).
      if (!st) this.removeAt(p);
      else if (st.isDirectory()) present.push({ p, rank, dir: true });
      else if (path.basename(p) === MANIFEST_NAME) present.push({ p, rank, dir: false });
    });
    // Then in boot order, so duplicates resolve as a restart would resolve them.
    present.sort((a, b) => a.rank - b.rank || comparePaths(a.p, b.p));
    const dirSet = new Set(present.filter((x) => x.dir).map((x) => x.p));
    const todo = present.filter((x) => !hasAncestorIn(x.p, dirSet)); // a folder's walk covers them
    const walks = await mapLimit(todo, IO_CONCURRENCY, (x) => (x.dir ? this.walk(x.p) : Promise.resolve([x.p])));
    const manifests: string[] = [];
    todo.forEach((x, i) => {
      const found = walks[i];
      if (found === undefined) return this.removeAt(x.p);
      if (x.dir) this.removeMissing(x.p, found);
      manifests.push(...found);
    });

    // Activity inside a folder: its own manifest, known packs below it that are no longer
    // there, and entry failures it may fix.
    const active = owned.filter((b) => b.dirty.activity).map((b) => b.path);
    const folders = active.filter((w) => path.basename(w) !== MANIFEST_NAME);
    const listings = await mapLimit(folders, IO_CONCURRENCY, (w) => readdir(w).then((n) => new Set(n), () => undefined));
    folders.forEach((w, i) => {
      const names = listings[i];
      if (names) this.removeVanishedChildren(w, names);
    });
    for (const w of active) manifests.push(path.basename(w) === MANIFEST_NAME ? w : path.join(w, MANIFEST_NAME));
    for (const [m, f] of this.failed) {
      if (isEntryFailure(f.msg) && folders.some((w) => isAtOrUnder(w, path.dirname(m)))) manifests.push(m);
    }
    await this.syncAll(manifests);
  }

  /** The manifests below a folder, in boot order; undefined if the folder is gone. */
  private async walk(dir: string): Promise<string[] | undefined> {
    const dirReal = await realpath(dir).catch(() => undefined);
    if (dirReal === undefined) return undefined;
    const found: string[] = [];
    for await (const m of walkManifests({ root: dir, rootReal: dirReal }, this.logger)) found.push(m);
    return found;
  }

  /** Forgets known manifests below `dir` that its walk no longer finds. */
  private removeMissing(dir: string, found: string[]): void {
    const foundSet = new Set(found);
    for (const known of [...this.candidates, ...this.failed.keys()]) {
      if (!foundSet.has(known) && isAtOrUnder(known, dir)) this.removeManifest(known);
    }
  }

  /**
   * A folder changed and `names` is what it holds now: known packs below it whose top folder
   * is not among them are gone. This covers a pack chokidar never saw (registered by the
   * catch-up walk), which chokidar would therefore never report as removed.
   */
  private removeVanishedChildren(w: string, names: Set<string>): void {
    const prefix = w.endsWith(path.sep) ? w : w + path.sep;
    const gone = new Set<string>();
    for (const m of [...this.candidates, ...this.failed.keys()]) {
      if (!m.startsWith(prefix)) continue;
      const child = m.slice(prefix.length).split(path.sep)[0] as string;
      if (!names.has(child)) gone.add(prefix + child);
    }
    for (const g of gone) this.removeAt(g);
  }

  /**
   * Walks a folder like the boot load and makes the registry match it below that folder.
   * `catchUp`: the boot load already logged (and counted) the manifests it refused; one it
   * did not register is loaded quietly, so it is neither logged nor counted twice.
   */
  private async reconcileDir(dir: string, opts: { catchUp?: boolean } = {}): Promise<void> {
    const found = await this.walk(dir);
    if (found === undefined) return this.removeAt(dir);
    this.removeMissing(dir, found);
    const quiet = (m: string) => opts.catchUp === true && !this.candidates.has(m) && !this.failed.has(m);
    const applied = await this.syncAll(found, quiet);
    // Changed since the boot walk, maybe before chokidar had a watch on its folder: have
    // chokidar scan the folder, or later edits there could go unseen.
    if (opts.catchUp) for (const m of applied) this.ownerOf(m)?.watcher?.add(path.dirname(m));
  }

  /**
   * Brings manifests in line with the disk: read and built in parallel, applied in the given
   * order (boot order matters for duplicates). Returns the paths whose state changed.
   */
  private async syncAll(paths: string[], quiet: (p: string) => boolean = () => false): Promise<string[]> {
    const unique = [...new Set(paths)];
    const plans = await mapLimit(unique, IO_CONCURRENCY, (m) => this.plan(m, quiet(m)));
    const applied: string[] = [];
    for (let i = 0; i < unique.length && !this.closed; i++) {
      const plan = plans[i] as Plan;
      this.apply(unique[i] as string, plan);
      if (plan.do === 'apply') applied.push(unique[i] as string);
    }
    return applied;
  }

  /**
   * The I/O half of syncing one manifest path: reads it and, if it changed, loads it. Touches
   * no state, so many can be planned in parallel and then applied in boot order.
   * `quiet`: found by the catch-up walk and unknown, so the boot load saw it and already
   * logged (and counted) any failure; load it without counting, remember failures silently.
   */
  private async plan(p: string, quiet: boolean): Promise<Plan> {
    const owner = this.ownerOf(p);
    const snap = await snapshotManifest(p);
    if (!owner?.info || snap.kind !== 'file') return { do: 'remove' };
    const root = owner.info;
    const cand = this.registry.getByManifest(p);
    // Unchanged bytes under an unchanged root: a touch, an `ls`, the skill writing its own folder.
    if (cand && snap.sha !== undefined && cand.manifestSha256 === snap.sha && cand.rootReal === root.rootReal && cand.root === root.root) {
      return { do: 'nothing' };
    }
    const prevFail = this.failed.get(p);
    // Refused before for the same bytes, and said so: nothing new unless the entry may have come.
    if (!cand && prevFail?.logged && prevFail.sha === snap.sha && !isEntryFailure(prevFail.msg)) return { do: 'nothing' };
    if (quiet && !snap.bytes) return { do: 'apply', sha: undefined, quiet, loaded: { ok: false, msg: '' } };
    const loaded = quiet && snap.bytes ? await buildExternalSkill(snap.bytes, p, root) : await loadManifestFile(p, root);
    return { do: 'apply', sha: snap.sha, quiet, loaded };
  }

  /** The state half: load, reload, unregister or nothing, with the registry, bookkeeping and log lines. */
  private apply(p: string, plan: Plan): void {
    if (plan.do === 'nothing') return;
    if (plan.do === 'remove') return this.removeManifest(p);
    const { loaded, sha, quiet } = plan;
    const prevFail = this.failed.get(p);
    if (!loaded.ok) {
      // A retry that fails the same way again (entry still missing) is not news.
      const repeat = prevFail !== undefined && prevFail.logged && prevFail.sha === sha && prevFail.msg === loaded.msg;
      if (!quiet && !repeat) {
        logLoadFailure(this.logger, p, loaded.skill === undefined ? { msg: loaded.msg } : { msg: loaded.msg, skill: loaded.skill });
      }
      this.failed.set(p, { sha, msg: loaded.msg, logged: !quiet });
      this.removeCandidate(p);
      return;
    }
    this.failed.delete(p);
    const skill = loaded.skill;
    const res = this.registry.upsert(skill);
    this.candidates.add(p);
    if (res.freed) {
      // It was the winner of a name it no longer carries.
      if (res.freed.promoted) logUpsert(this.logger, res.freed.promoted, 'registered');
      else if (res.previous) logUnregistered(this.logger, res.previous);
    }
    logUpsert(this.logger, skill, res.action);
  }

  private isWinner(skill: ExternalSkill | undefined): boolean {
    return skill !== undefined && this.registry.get(skill.name) === skill;
  }

  /** Forgets whatever is known at exactly this manifest path. */
  private removeManifest(p: string): void {
    this.failed.delete(p);
    this.removeCandidate(p);
  }

  private removeCandidate(p: string): void {
    if (!this.candidates.delete(p)) return;
    const wasWinner = this.isWinner(this.registry.getByManifest(p));
    this.reportRemoval(this.registry.removeByManifest(p), wasWinner);
  }

  /** A file or folder vanished: every manifest at or below it goes. */
  private removeAt(gonePath: string): void {
    for (const p of [...this.failed.keys()]) if (isAtOrUnder(p, gonePath)) this.failed.delete(p);
    const victims = [...this.candidates].filter((p) => isAtOrUnder(p, gonePath));
    if (victims.length === 0) return;
    const winners = new Set(victims.filter((p) => this.isWinner(this.registry.getByManifest(p))));
    for (const p of victims) this.candidates.delete(p);
    for (const r of this.registry.removeUnder(gonePath)) {
      if (r.removed) this.reportRemoval(r, winners.has(r.removed.manifestPath));
    }
  }

  private reportRemoval(r: RemoveResult, wasWinner: boolean): void {
    if (!r.removed) return;
    if (wasWinner) logUnregistered(this.logger, r.removed);
    else {
      this.logger.debug(
        { skill: r.removed.name, manifest: r.removed.manifestPath },
        `skill loader: dropped skipped duplicate "${r.removed.name}" at ${r.removed.manifestPath}`,
      );
    }
    if (r.promoted) logUpsert(this.logger, r.promoted, 'registered');
  }
}

/** Runs `fn` over `items`, at most `limit` at a time; results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

function hasAncestorIn(p: string, dirs: Set<string>): boolean {
  for (let d = path.dirname(p); ; d = path.dirname(d)) {
    if (dirs.has(d)) return true;
    if (path.dirname(d) === d) return false;
  }
}

/**
 * Watches the allow-list roots and keeps `registry` equal to the manifests on disk. Call it
 * after the initial loadAll; close() on shutdown (no handle is left open afterwards).
 */
export function watchSkills(opts: SkillWatcherOptions): SkillWatcher {
  return new Watcher(opts);
}
