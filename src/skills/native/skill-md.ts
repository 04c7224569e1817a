/**
 * SKILL.md → a validated description of its tools (CONTRACT section 8). Pure: no disk, no
 * registry. A broken file is one reason; a broken tool is a reason for that tool only, so its
 * siblings still load.
 */
import { parseDocument } from 'yaml';
import { DEFAULT_TIMEOUT_SECONDS, NAME_PATTERN } from '../manifest.js';
import type { JsonSchema, SkillClass } from '../types.js';

/** SKILL.md speaks of what a tool does to the world; the service gates on safe/mutating/dangerous. */
export const CLASS_MAP: Readonly<Record<string, SkillClass>> = {
  read: 'safe',
  write: 'mutating',
  destructive: 'dangerous',
};

export const DEFAULT_NATIVE_CATEGORY = 'native';
export const IMPL_PATTERN = /^builtin:([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+)$/;

export interface Requirements {
  /** process.platform values; undefined = any. */
  os?: string[];
  /** Executables that must be on PATH. */
  bins: string[];
  /** Environment variables that must be set (non-empty). */
  config: string[];
}

export interface NativeToolSpec {
  name: string;
  /** `builtin:<module>.<Function>` as written. */
  impl: string;
  class: SkillClass;
  description: string;
  schema: JsonSchema;
  timeoutSeconds: number;
}

export type ToolResult = { ok: true; tool: NativeToolSpec } | { ok: false; name: string; reason: string };

export interface SkillMdSpec {
  name: string;
  description: string;
  whenToUse?: string;
  activation?: string;
  requires: Requirements;
  category: string;
  ongrid: Record<string, unknown>;
  /** One entry per item of `tools`, in file order. */
  tools: ToolResult[];
}

export type SkillMdResult = { ok: true; spec: SkillMdSpec } | { ok: false; reason: string };

type Field<T> = { ok: true; value: T } | { ok: false; reason: string };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** The YAML between a first `---` line and the next `---` line. */
export function extractFrontmatter(text: string): Field<string> {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') return { ok: false, reason: 'no YAML frontmatter (the first line must be ---)' };
  const end = lines.findIndex((l, i) => i > 0 && l.trimEnd() === '---');
  if (end < 0) return { ok: false, reason: 'frontmatter is not closed by a --- line' };
  return { ok: true, value: lines.slice(1, end).join('\n') };
}

function parseYaml(text: string): Field<Record<string, unknown>> {
  const doc = parseDocument(text);
  const err = doc.errors[0];
  if (err) return { ok: false, reason: `invalid YAML in frontmatter: ${err.message.split('\n')[0] ?? ''}` };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, reason: `invalid YAML in frontmatter: ${(e as Error).message.split('\n')[0] ?? ''}` };
  }
  if (!isPlainObject(value)) return { ok: false, reason: 'frontmatter is not a YAML mapping' };
  return { ok: true, value };
}

function stringList(v: unknown, label: string): Field<string[]> {
  if (v === undefined || v === null) return { ok: true, value: [] };
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' && s.trim() !== '')) {
    return { ok: false, reason: `${label} must be a list of non-empty strings` };
  }
  return { ok: true, value: v.map((s: string) => s.trim()) };
}

function optionalString(v: unknown, label: string): Field<string | undefined> {
  if (v === undefined || v === null) return { ok: true, value: undefined };
  if (typeof v !== 'string') return { ok: false, reason: `${label} must be a string` };
  return { ok: true, value: v };
}

function parseRequirements(metadata: Record<string, unknown>): Field<Requirements> {
  const os = stringList(own(metadata, 'os'), 'metadata.os');
  if (!os.ok) return os;
  const requires = own(metadata, 'requires') ?? {};
  if (!isPlainObject(requires)) return { ok: false, reason: 'metadata.requires must be a mapping' };
  const bins = stringList(own(requires, 'bins'), 'metadata.requires.bins');
  if (!bins.ok) return bins;
  const config = stringList(own(requires, 'config'), 'metadata.requires.config');
  if (!config.ok) return config;
  // An absent or empty os list means "any platform".
  const req: Requirements = { bins: bins.value, config: config.value };
  if (os.value.length > 0) req.os = os.value;
  return { ok: true, value: req };
}

/** One item of `tools[]`; the first rule it breaks is its reason. */
export function parseTool(raw: unknown, index: number): ToolResult {
  if (!isPlainObject(raw)) return { ok: false, name: '', reason: `tools[${index}] must be a mapping` };
  const name = own(raw, 'name');
  const fail = (reason: string): ToolResult => ({ ok: false, name: typeof name === 'string' ? name : '', reason });
  if (name === undefined || name === null || name === '') return fail(`tools[${index}]: missing field "name"`);
  if (typeof name !== 'string') return fail(`tools[${index}]: name must be a string`);
  if (!NAME_PATTERN.test(name)) return fail(`name ${JSON.stringify(name)} invalid (must match ${NAME_PATTERN.source})`);

  const description = own(raw, 'description');
  if (description === undefined) return fail('missing field "description"');
  if (typeof description !== 'string' || description.trim() === '') return fail('description must be a non-empty string');

  const impl = own(raw, 'impl');
  if (impl === undefined) return fail('missing field "impl"');
  if (typeof impl !== 'string' || !IMPL_PATTERN.test(impl)) {
    return fail(`impl ${JSON.stringify(impl)} invalid (expected builtin:<module>.<Function>)`);
  }

  const klass = own(raw, 'class');
  if (klass === undefined) return fail('missing field "class" (read, write or destructive)');
  const mapped = typeof klass === 'string' && Object.hasOwn(CLASS_MAP, klass) ? CLASS_MAP[klass] : undefined;
  if (mapped === undefined) return fail(`class ${JSON.stringify(klass)} invalid (expected read, write or destructive)`);

  const schema = own(raw, 'schema');
  if (schema !== undefined && !(isPlainObject(schema) && schema.type === 'object')) {
    return fail('schema must describe type "object"');
  }

  const timeout = own(raw, 'timeout_seconds');
  if (timeout !== undefined && !Number.isInteger(timeout)) {
    return fail(`timeout_seconds must be an integer, got ${JSON.stringify(timeout)}`);
  }

  return {
    ok: true,
    tool: {
      name,
      impl,
      class: mapped,
      description: description.trim(),
      schema: schema === undefined ? { type: 'object', properties: {} } : schema,
      timeoutSeconds: typeof timeout === 'number' && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SECONDS,
    },
  };
}

/** Pure: SKILL.md text → its spec, or the one-line reason the whole file is rejected. */
export function parseSkillMd(text: string): SkillMdResult {
  const front = extractFrontmatter(text);
  if (!front.ok) return front;
  const yaml = parseYaml(front.value);
  if (!yaml.ok) return yaml;
  const fm = yaml.value;

  const name = own(fm, 'name');
  if (name === undefined || name === null || name === '') return { ok: false, reason: 'missing field "name"' };
  if (typeof name !== 'string') return { ok: false, reason: 'name must be a string' };
  const description = own(fm, 'description');
  if (typeof description !== 'string' || description.trim() === '') {
    return { ok: false, reason: 'missing field "description" (a non-empty string)' };
  }
  const whenToUse = optionalString(own(fm, 'when_to_use'), 'when_to_use');
  if (!whenToUse.ok) return whenToUse;
  const activation = optionalString(own(fm, 'activation'), 'activation');
  if (!activation.ok) return activation;

  const metadata = own(fm, 'metadata') ?? {};
  if (!isPlainObject(metadata)) return { ok: false, reason: 'metadata must be a mapping' };
  const requires = parseRequirements(metadata);
  if (!requires.ok) return requires;
  const ongrid = own(metadata, 'ongrid') ?? {};
  if (!isPlainObject(ongrid)) return { ok: false, reason: 'metadata.ongrid must be a mapping' };
  const category = own(ongrid, 'category');
  if (category !== undefined && (typeof category !== 'string' || category === '')) {
    return { ok: false, reason: 'metadata.ongrid.category must be a non-empty string' };
  }

  const tools = own(fm, 'tools');
  if (!Array.isArray(tools) || tools.length === 0) return { ok: false, reason: 'tools must be a non-empty list' };

  return {
    ok: true,
    spec: {
      name,
      description: description.trim(),
      ...(whenToUse.value !== undefined && { whenToUse: whenToUse.value }),
      ...(activation.value !== undefined && { activation: activation.value }),
      requires: requires.value,
      category: typeof category === 'string' ? category : DEFAULT_NATIVE_CATEGORY,
      ongrid,
      tools: tools.map((t, i) => parseTool(t, i)),
    },
  };
}
