import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { checkContained } from './containment.js';
import type { RootInfo } from './roots.js';
import { compileSchema } from './schema-compiler.js';
import { SKILL_CLASSES, type ExternalSkill, type JsonSchema, type SkillClass } from './types.js';

/** A manifest larger than this is refused without being read whole. */
export const MANIFEST_MAX_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_CATEGORY = 'external';
export const NAME_PATTERN = /^[a-z0-9_]+$/;

// --- exact log messages (CONTRACT section 2) -------------------------------------------------

export function parseMessage(manifestPath: string, detail: string): string {
  return `skill loader: parse ${manifestPath}: ${detail}`;
}

export function tooLargeMessage(manifestPath: string, size: number): string {
  return parseMessage(manifestPath, `manifest is ${size} bytes, over the ${MANIFEST_MAX_BYTES}-byte limit`);
}

export function buildMessage(name: string, reason: string): string {
  return `skill loader: build ${JSON.stringify(name)}: ${reason}`;
}

// --- pure field rules ----------------------------------------------------------------------

/** The manifest's fields after validation, defaults applied; no I/O has happened yet. */
export interface ManifestFields {
  name: string;
  description: string;
  schema: JsonSchema;
  entry: string;
  envAllow: string[];
  timeoutSeconds: number;
  class: SkillClass;
  category: string;
}

export type FieldsResult = { ok: true; fields: ManifestFields } | { ok: false; name: string; reason: string };

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Applies every field rule of a parsed manifest, in a fixed order, and reports the first
 * failure. Checks needing the disk (entry containment) come later, so a manifest with a bad
 * class is reported as a bad class even when its entry file is missing too.
 */
export function validateFields(raw: unknown): FieldsResult {
  if (!isPlainObject(raw)) {
    return { ok: false, name: '', reason: `manifest must be a JSON object, got ${jsonType(raw)}` };
  }
  // Own properties only: `{"constructor": ...}` tricks must not reach the prototype.
  const get = (key: string): unknown => (Object.hasOwn(raw, key) ? raw[key] : undefined);
  const fail = (reason: string, name = ''): FieldsResult => ({ ok: false, name, reason });

  const name = get('name');
  if (name === undefined) return fail('missing field "name"');
  if (typeof name !== 'string') return fail(`name must be a string, got ${jsonType(name)}`);
  if (!NAME_PATTERN.test(name)) return fail(`name ${JSON.stringify(name)} invalid (must match ${NAME_PATTERN.source})`, name);

  const description = get('description');
  if (description === undefined) return fail('missing field "description"', name);
  if (typeof description !== 'string' || description.trim() === '') {
    return fail('description must be a non-empty string', name);
  }

  const entry = get('entry');
  if (entry === undefined) return fail('missing field "entry"', name);
  if (typeof entry !== 'string' || entry === '') return fail('entry must be a non-empty string', name);

  const klass = get('class');
  if (klass !== undefined && !SKILL_CLASSES.includes(klass as SkillClass)) {
    // Exact wording is part of the contract: `class "wild" invalid`.
    return fail(`class ${JSON.stringify(klass)} invalid`, name);
  }

  const timeout = get('timeout_seconds');
  if (timeout !== undefined && !Number.isInteger(timeout)) {
    return fail(`timeout_seconds must be an integer, got ${JSON.stringify(timeout)}`, name);
  }

  const envAllow = get('env_allow');
  if (envAllow !== undefined && !(Array.isArray(envAllow) && envAllow.every((e) => typeof e === 'string'))) {
    return fail('env_allow must be an array of strings', name);
  }

  const category = get('category');
  if (category !== undefined && typeof category !== 'string') return fail('category must be a string', name);

  const schema = get('schema');
  if (schema !== undefined && !(isPlainObject(schema) && schema.type === 'object')) {
    return fail('schema must describe type "object"', name);
  }

  return {
    ok: true,
    fields: {
      name,
      description,
      schema: schema === undefined ? { type: 'object', properties: {} } : schema,
      entry,
      envAllow: envAllow === undefined ? [] : [...(envAllow as string[])],
      timeoutSeconds: typeof timeout === 'number' && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SECONDS,
      class: klass === undefined ? 'safe' : (klass as SkillClass),
      category: category === undefined ? DEFAULT_CATEGORY : category,
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

// --- bytes + paths -> skill ----------------------------------------------------------------

/** On failure `msg` is the exact log message; `skill` is the name as written, for build errors. */
export type BuildResult = { ok: true; skill: ExternalSkill } | { ok: false; msg: string; skill?: string };

/**
 * Turns the bytes of one skill.json into an immutable ExternalSkill, or the exact log
 * message saying why not. `manifestPath` is the path as found under the configured root.
 */
export async function buildExternalSkill(bytes: Buffer, manifestPath: string, root: RootInfo): Promise<BuildResult> {
  let raw: unknown;
  try {
    // Tolerate a UTF-8 byte-order mark, which some editors write.
    raw = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    return { ok: false, msg: parseMessage(manifestPath, (err as Error).message) };
  }

  const checked = validateFields(raw);
  if (!checked.ok) return { ok: false, msg: buildMessage(checked.name, checked.reason), skill: checked.name };
  const f = checked.fields;

  const compiled = compileSchema(f.schema);
  if (!compiled.ok) return { ok: false, msg: buildMessage(f.name, `schema invalid: ${compiled.error}`), skill: f.name };

  const dir = path.dirname(manifestPath);
  const entry = path.resolve(dir, f.entry);
  const contained = await checkContained(entry, root.rootReal);
  if (!contained.ok) {
    const reason =
      contained.reason === 'escapes'
        ? `entry ${contained.real} escapes allowlist root ${root.rootReal}`
        : `entry ${entry} not found`;
    return { ok: false, msg: buildMessage(f.name, reason), skill: f.name };
  }
  const isFile = await stat(contained.real).then((st) => st.isFile(), () => false);
  if (!isFile) {
    return { ok: false, msg: buildMessage(f.name, `entry ${entry} is not a regular file`), skill: f.name };
  }

  const skill: ExternalSkill = {
    source: 'external',
    name: f.name,
    description: f.description,
    class: f.class,
    category: f.category,
    schema: deepFreeze(f.schema),
    timeoutSeconds: f.timeoutSeconds,
    validate: compiled.validate,
    available: true,
    manifestPath,
    dir,
    entry,
    root: root.root,
    rootReal: root.rootReal,
    envAllow: Object.freeze(f.envAllow),
    manifestSha256: createHash('sha256').update(bytes).digest('hex'),
  };
  return { ok: true, skill: Object.freeze(skill) };
}
