import type { ValidateFunction } from 'ajv';

/** Risk class of a skill; drives persona gating (CONTRACT section 7). */
export type SkillClass = 'safe' | 'mutating' | 'dangerous';
export const SKILL_CLASSES: readonly SkillClass[] = ['safe', 'mutating', 'dangerous'];

export type SkillSource = 'external' | 'native';

/** A JSON Schema describing an object (the skill's args). */
export type JsonSchema = Record<string, unknown>;

interface SkillCommon {
  readonly name: string;
  readonly description: string;
  readonly class: SkillClass;
  readonly category: string;
  readonly schema: JsonSchema;
  readonly timeoutSeconds: number;
  /** ajv validator compiled at load time; applies defaults (useDefaults) and reports all errors. */
  readonly validate: ValidateFunction;
  readonly available: boolean;
  readonly unavailableReason?: string;
}

/** A skill.json pack: an executable run as a subprocess. Immutable snapshot. */
export interface ExternalSkill extends SkillCommon {
  readonly source: 'external';
  /** Absolute path of the skill.json. */
  readonly manifestPath: string;
  /** Absolute path of the folder holding skill.json (the child's cwd). */
  readonly dir: string;
  /** The entry as resolved against the manifest folder (absolute, symlinks not resolved). */
  readonly entry: string;
  /** The allow-list root as configured, and its realpath (containment is checked against this). */
  readonly root: string;
  readonly rootReal: string;
  readonly envAllow: readonly string[];
  /** sha256 of the manifest file bytes as loaded. */
  readonly manifestSha256: string;
}

/** Context handed to a native (in-process) skill implementation. */
export interface NativeContext {
  readonly signal: AbortSignal;
  /** Adds a line to the execution's timeline (as a `stderr` event). */
  log(line: string): void;
}

export type NativeImpl = (args: Record<string, unknown>, ctx: NativeContext) => Promise<unknown>;

/** A built-in skill described by SKILL.md and implemented in TypeScript. */
export interface NativeSkill extends SkillCommon {
  readonly source: 'native';
  readonly impl: NativeImpl;
  /** Path of the SKILL.md it comes from. */
  readonly specPath: string;
}

export type Skill = ExternalSkill | NativeSkill;
