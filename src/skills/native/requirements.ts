/**
 * Whether a native skill can run here: its platform, the executables it needs on PATH and the
 * configuration (environment variables) it reads. Checked once at load; an unmet requirement
 * makes the skill listed as unavailable with a reason, never a load error.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { Requirements } from './skill-md.js';

export interface Availability {
  available: boolean;
  /** Why not, for humans; absent when available. */
  reason?: string;
}

/** What the host offers; gathered by `hostFacts`, injectable for tests. */
export interface HostFacts {
  platform: string;
  hasBin(name: string): boolean;
  env: NodeJS.ProcessEnv;
}

/** Pure: every unmet requirement, joined into one reason. */
export function evaluateRequirements(req: Requirements, host: HostFacts): Availability {
  const reasons: string[] = [];
  if (req.os && !req.os.includes(host.platform)) {
    reasons.push(`requires os ${req.os.join(' or ')} (this host is ${host.platform})`);
  }
  const missingBins = req.bins.filter((b) => !host.hasBin(b));
  if (missingBins.length > 0) {
    reasons.push(`requires ${missingBins.map((b) => `"${b}"`).join(', ')} on PATH`);
  }
  const unset = req.config.filter((name) => (host.env[name] ?? '').trim() === '');
  if (unset.length > 0) reasons.push(`requires configuration ${unset.join(', ')} to be set`);
  return reasons.length === 0 ? { available: true } : { available: false, reason: reasons.join('; ') };
}

/** True when `name` is an executable regular file in one of the PATH folders. */
export function isOnPath(name: string, env: NodeJS.ProcessEnv, platform: string = process.platform): boolean {
  // A bin names a program, not a path: `../x` or `/bin/sh` would bypass the PATH check.
  if (name === '' || name.includes('/') || name.includes('\\')) return false;
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter((d) => d !== '');
  const exts = platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const file = path.join(dir, name + ext);
      try {
        if (!statSync(file).isFile()) continue;
        accessSync(file, constants.X_OK);
        return true;
      } catch {
        // not here; try the next folder
      }
    }
  }
  return false;
}

export function hostFacts(env: NodeJS.ProcessEnv, platform: string = process.platform): HostFacts {
  return { platform, env, hasBin: (name) => isOnPath(name, env, platform) };
}

export function checkRequirements(req: Requirements, env: NodeJS.ProcessEnv, platform: string = process.platform): Availability {
  return evaluateRequirements(req, hostFacts(env, platform));
}
