/**
 * Loads the built-in skills: every `<dir>/<folder>/SKILL.md`, in lexical order. Each valid
 * tool becomes one NativeSkill in the registry; a broken file or tool is a warn line and never
 * blocks the start. Requirements are checked here, once: an unmet one registers the skill as
 * unavailable (the executor answers 409 skill_unavailable).
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BaseLogger } from 'pino';
import { compareCodePoints, type SkillRegistry } from '../registry.js';
import { compileSchema } from '../schema-compiler.js';
import type { NativeSkill } from '../types.js';
import { resolveBuiltin } from './builtins.js';
import { checkRequirements, type Availability } from './requirements.js';
import { parseSkillMd, type NativeToolSpec } from './skill-md.js';

export const SKILL_MD = 'SKILL.md';
export const SKILL_MD_MAX_BYTES = 256 * 1024;

type Logger = Pick<BaseLogger, 'info' | 'warn'>;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export type BuildNativeResult = { ok: true; skill: NativeSkill } | { ok: false; reason: string };

/** One parsed tool → a NativeSkill, or why not (unknown impl, schema that does not compile). */
export function buildNativeSkill(
  tool: NativeToolSpec,
  specPath: string,
  category: string,
  availability: Availability,
  env: NodeJS.ProcessEnv,
): BuildNativeResult {
  const impl = resolveBuiltin(tool.impl, env);
  if (!impl) return { ok: false, reason: `unknown impl "${tool.impl}"` };
  const compiled = compileSchema(tool.schema);
  if (!compiled.ok) return { ok: false, reason: `schema invalid: ${compiled.error}` };
  const skill: NativeSkill = {
    source: 'native',
    name: tool.name,
    description: tool.description,
    class: tool.class,
    category,
    schema: deepFreeze(tool.schema),
    timeoutSeconds: tool.timeoutSeconds,
    validate: compiled.validate,
    available: availability.available,
    ...(!availability.available && { unavailableReason: availability.reason ?? 'requirements not met' }),
    impl,
    specPath,
  };
  return { ok: true, skill: Object.freeze(skill) };
}

async function specPaths(dir: string, logger: Logger): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    logger.info({ dir, code }, `skill loader: native skills dir ${dir} not readable (${code}), skipping`);
    return [];
  }
  const out: string[] = [];
  for (const e of entries.sort((a, b) => compareCodePoints(a.name, b.name))) {
    const folder = path.join(dir, e.name);
    const isDir = e.isDirectory() || (e.isSymbolicLink() && (await stat(folder).then((s) => s.isDirectory(), () => false)));
    if (!isDir) continue;
    const spec = path.join(folder, SKILL_MD);
    if (await stat(spec).then((s) => s.isFile(), () => false)) out.push(spec);
  }
  return out;
}

async function readSpec(specPath: string): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  try {
    const st = await stat(specPath);
    if (st.size > SKILL_MD_MAX_BYTES) return { ok: false, reason: `file is ${st.size} bytes, over the ${SKILL_MD_MAX_BYTES}-byte limit` };
    return { ok: true, text: await readFile(specPath, 'utf8') };
  } catch (err) {
    return { ok: false, reason: `cannot read file (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}

/** Registers every valid tool of every SKILL.md under `dir`; returns how many were registered. */
export async function loadNativeSkills(
  dir: string,
  registry: SkillRegistry,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let registered = 0;
  let errors = 0;
  const warn = (fields: Record<string, unknown>, msg: string) => {
    errors++;
    logger.warn(fields, msg);
  };
  for (const specPath of await specPaths(dir, logger)) {
    const read = await readSpec(specPath);
    const parsed = read.ok ? parseSkillMd(read.text) : read;
    if (!parsed.ok) {
      warn({ spec: specPath }, `skill loader: parse ${specPath}: ${parsed.reason}`);
      continue;
    }
    const { spec } = parsed;
    const availability = checkRequirements(spec.requires, env);
    for (const t of spec.tools) {
      if (!t.ok) {
        warn({ spec: specPath, skill: t.name }, `skill loader: build native skill ${JSON.stringify(t.name)} from ${specPath}: ${t.reason}`);
        continue;
      }
      const built = buildNativeSkill(t.tool, specPath, spec.category, availability, env);
      if (!built.ok) {
        warn({ spec: specPath, skill: t.tool.name }, `skill loader: build native skill "${t.tool.name}" from ${specPath}: ${built.reason}`);
        continue;
      }
      const existing = registry.get(t.tool.name);
      if (existing?.source === 'native') {
        logger.info({ spec: specPath, skill: t.tool.name }, `skill loader: skill "${t.tool.name}" already registered, skipping ${specPath}`);
        continue;
      }
      registry.registerNative(built.skill);
      registered++;
      const fields = { spec: specPath, skill: t.tool.name, available: built.skill.available };
      logger.info(fields, `skill loader: registered native skill "${t.tool.name}" from ${specPath}`);
      if (!built.skill.available) {
        logger.info(fields, `skill loader: native skill "${t.tool.name}" unavailable: ${built.skill.unavailableReason ?? ''}`);
      }
    }
  }
  logger.info({ registered, errors }, `skill loader: ${registered} native skills registered`);
  return registered;
}
