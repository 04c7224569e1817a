import path from 'node:path';
import { normalizeRoot } from './roots.js';
import type { ExternalSkill, NativeSkill, Skill } from './types.js';

/**
 * Orders strings by Unicode code point (JS `<` compares UTF-16 units, which puts
 * U+E000..U+FFFF after astral characters). Remapping the units fixes that without allocating.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return remapUnit(x) - remapUnit(y);
  }
  return a.length - b.length;
}

function remapUnit(u: number): number {
  if (u >= 0xd800 && u <= 0xdfff) return u + 0x2000; // surrogates: code points above U+FFFF
  if (u >= 0xe000) return u - 0x800;
  return u;
}

export type UpsertAction = 'registered' | 'reloaded' | 'skipped_duplicate';

export interface UpsertResult {
  action: UpsertAction;
  /** The earlier candidate from the same manifest path, if any. */
  previous?: ExternalSkill;
  /** Set when the previous version was the winner of a name it no longer carries. */
  freed?: { name: string; promoted?: ExternalSkill };
}

export interface RemoveResult {
  removed?: ExternalSkill;
  /** The skipped duplicate that took the removed winner's name. */
  promoted?: ExternalSkill;
}

/**
 * Name -> skill. External skills are kept as candidates by manifest path; per name, the
 * earliest registered candidate wins and the others wait as skipped duplicates, promoted (in
 * root order, then lexical path order) when the winner goes. Native skills take precedence
 * over external ones of the same name. Entries are immutable and replaced, never mutated.
 */
export class SkillRegistry {
  private readonly natives = new Map<string, NativeSkill>();
  private readonly candidates = new Map<string, ExternalSkill>();
  /** name -> manifest path of the winning external candidate. */
  private readonly winners = new Map<string, string>();
  private readonly rootRanks = new Map<string, number>();
  private readonly listeners = new Set<() => void>();

  constructor(opts: { rootOrder?: string[] } = {}) {
    if (opts.rootOrder) this.setRootOrder(opts.rootOrder);
  }

  /** The configured root order, used to pick which duplicate is promoted. */
  setRootOrder(roots: string[]): void {
    const known = [...this.rootRanks.keys()];
    this.rootRanks.clear();
    for (const r of [...roots.map(normalizeRoot), ...known]) {
      if (!this.rootRanks.has(r)) this.rootRanks.set(r, this.rootRanks.size);
    }
  }

  get(name: string): Skill | undefined {
    const native = this.natives.get(name);
    if (native) return native;
    const p = this.winners.get(name);
    return p === undefined ? undefined : this.candidates.get(p);
  }

  /** Winners, sorted by name by code point. */
  list(): Skill[] {
    const names = new Set([...this.natives.keys(), ...this.winners.keys()]);
    return [...names].sort(compareCodePoints).map((n) => this.get(n) as Skill);
  }

  get size(): number {
    let n = this.natives.size;
    for (const name of this.winners.keys()) if (!this.natives.has(name)) n++;
    return n;
  }

  registerNative(skill: NativeSkill): void {
    this.natives.set(skill.name, skill);
    // An external winner of that name steps back to being a candidate.
    this.winners.delete(skill.name);
    this.emit();
  }

  getByManifest(manifestPath: string): ExternalSkill | undefined {
    return this.candidates.get(manifestPath);
  }

  /** Every known external candidate's manifest path, in root order then lexical path order. */
  manifestPaths(): string[] {
    return [...this.candidates.values()].sort((a, b) => this.compareOrder(a, b)).map((c) => c.manifestPath);
  }

  upsertExternal(skill: ExternalSkill): UpsertAction {
    return this.upsert(skill).action;
  }

  /** Adds or replaces the candidate at `skill.manifestPath`, reporting any name it freed. */
  upsert(skill: ExternalSkill): UpsertResult {
    const key = skill.manifestPath;
    const previous = this.candidates.get(key);
    const previousWon = previous !== undefined && this.winners.get(previous.name) === key;
    this.candidates.set(key, skill);

    if (previousWon && previous.name === skill.name) {
      this.emit();
      return { action: 'reloaded', previous };
    }
    let freed: UpsertResult['freed'];
    if (previousWon) {
      this.winners.delete(previous.name);
      const promoted = this.promote(previous.name);
      freed = promoted ? { name: previous.name, promoted } : { name: previous.name };
    }
    let action: UpsertAction = 'skipped_duplicate';
    if (!this.natives.has(skill.name) && !this.winners.has(skill.name)) {
      this.winners.set(skill.name, key);
      action = 'registered';
    }
    this.emit();
    return { action, ...(previous && { previous }), ...(freed && { freed }) };
  }

  removeByManifest(manifestPath: string): RemoveResult {
    const removed = this.candidates.get(manifestPath);
    if (!removed) return {};
    this.candidates.delete(manifestPath);
    let promoted: ExternalSkill | undefined;
    if (this.winners.get(removed.name) === manifestPath) {
      this.winners.delete(removed.name);
      promoted = this.promote(removed.name);
    }
    this.emit();
    return promoted ? { removed, promoted } : { removed };
  }

  /** Removes every candidate at or below `dirPath` (a pack folder or a whole root went away). */
  removeUnder(dirPath: string): RemoveResult[] {
    const victims = [...this.candidates.values()]
      .filter((c) => isAtOrUnder(c.manifestPath, dirPath))
      .sort((a, b) => this.compareOrder(a, b));
    if (victims.length === 0) return [];
    // Delete them all before promoting, so no victim is promoted in place of another.
    const freedBy = new Set<ExternalSkill>();
    for (const v of victims) {
      this.candidates.delete(v.manifestPath);
      if (this.winners.get(v.name) === v.manifestPath) {
        this.winners.delete(v.name);
        freedBy.add(v);
      }
    }
    const results = victims.map((removed): RemoveResult => {
      const promoted = freedBy.has(removed) ? this.promote(removed.name) : undefined;
      return promoted ? { removed, promoted } : { removed };
    });
    this.emit();
    return results;
  }

  /** Subscribes to any change of the registry; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private promote(name: string): ExternalSkill | undefined {
    if (this.natives.has(name)) return undefined;
    let best: ExternalSkill | undefined;
    for (const c of this.candidates.values()) {
      if (c.name === name && (!best || this.compareOrder(c, best) < 0)) best = c;
    }
    if (best) this.winners.set(name, best.manifestPath);
    return best;
  }

  private rootRank(root: string): number {
    let rank = this.rootRanks.get(root);
    if (rank === undefined) {
      rank = this.rootRanks.size;
      this.rootRanks.set(root, rank);
    }
    return rank;
  }

  /** Root order, then the walk's order: path segments compared one by one by code point. */
  private compareOrder(a: ExternalSkill, b: ExternalSkill): number {
    const byRoot = this.rootRank(a.root) - this.rootRank(b.root);
    if (byRoot !== 0) return byRoot;
    const sa = path.relative(a.root, a.manifestPath).split(path.sep);
    const sb = path.relative(b.root, b.manifestPath).split(path.sep);
    for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
      const c = compareCodePoints(sa[i] as string, sb[i] as string);
      if (c !== 0) return c;
    }
    return sa.length - sb.length;
  }

  private emit(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch {
        // A failing metrics/cache listener must not leave the registry half-updated for others.
      }
    }
  }
}

function isAtOrUnder(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!path.isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${path.sep}`));
}
