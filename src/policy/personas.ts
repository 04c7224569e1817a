import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { parseDocument } from 'yaml';

export type PermissionMode = 'read-only' | 'mutating-with-confirm' | 'dual-sign-required';
export const PERMISSION_MODES: readonly PermissionMode[] = [
  'read-only',
  'mutating-with-confirm',
  'dual-sign-required',
];

export interface Persona {
  name: string;
  description: string;
  permission_mode: PermissionMode;
  /** Allow list of skill-name patterns; empty = every skill. */
  tools: string[];
  /** Deny list of skill-name patterns; wins over `tools`. */
  disallowed_tools: string[];
  /** 'builtin' or the absolute path of the persona file. */
  source: 'builtin' | string;
}

/** The public JSON shape of a persona (CONTRACT section 12); `source` stays internal. */
export interface PersonaJson {
  name: string;
  description: string;
  permission_mode: PermissionMode;
  tools: string[];
  disallowed_tools: string[];
}

export const DEFAULT_PERSONA: Persona = Object.freeze({
  name: 'default',
  description: 'Built-in persona: read-only, may call every skill (safe ones run, others are forbidden).',
  permission_mode: 'read-only',
  tools: Object.freeze([]) as unknown as string[],
  disallowed_tools: Object.freeze([]) as unknown as string[],
  source: 'builtin',
});

export function toPersonaJson(p: Persona): PersonaJson {
  return {
    name: p.name,
    description: p.description,
    permission_mode: p.permission_mode,
    tools: [...p.tools],
    disallowed_tools: [...p.disallowed_tools],
  };
}

const NAME_RE = /^[A-Za-z0-9_.-]+$/;
/** A pattern is a name with an optional `*` at its start and/or end (CONTRACT section 7). */
const PATTERN_RE = /^\*?[^*\s,]*\*?$/;
export const MAX_PERSONA_FILE_BYTES = 256 * 1024;

type Parsed = { ok: true; persona: Persona } | { ok: false; reason: string };
type Field<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Splits `---\n<yaml>\n---` off the top of the file; the YAML's first line is file line 2. */
function extractFrontmatter(text: string): Field<string> {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    return { ok: false, reason: 'no YAML frontmatter (the first line must be ---)' };
  }
  const end = lines.findIndex((l, i) => i > 0 && l.trimEnd() === '---');
  if (end < 0) return { ok: false, reason: 'frontmatter is not closed by a --- line' };
  return { ok: true, value: lines.slice(1, end).join('\n') };
}

function parseYamlMapping(yamlText: string): Field<Record<string, unknown>> {
  const doc = parseDocument(yamlText, { prettyErrors: true });
  const err = doc.errors[0];
  if (err) {
    // First line only, and line numbers counted in the file rather than in the frontmatter.
    const head = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    const where = err.linePos ? ` at line ${err.linePos[0].line + 1}` : '';
    return { ok: false, reason: `invalid YAML in frontmatter${where}: ${head}` };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, reason: `invalid YAML in frontmatter: ${(e as Error).message.split('\n')[0]}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'frontmatter is not a YAML mapping' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** A YAML list of strings or a comma-separated string; absent (or empty value) = []. */
function patternList(fm: Record<string, unknown>, key: string): Field<string[]> {
  const raw = fm[key];
  if (raw === undefined || raw === null) return { ok: true, value: [] };
  let items: string[];
  if (typeof raw === 'string') {
    items = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  } else if (Array.isArray(raw)) {
    if (!raw.every((s): s is string => typeof s === 'string')) {
      return { ok: false, reason: `${key} must be a list of strings or a comma-separated string` };
    }
    items = raw.map((s) => s.trim());
  } else {
    return { ok: false, reason: `${key} must be a list of strings or a comma-separated string` };
  }
  const bad = items.find((s) => s === '' || !PATTERN_RE.test(s) || s === '**');
  if (bad !== undefined) {
    return {
      ok: false,
      reason: `${key} entry ${JSON.stringify(bad)} is not a skill name or pattern (* only at the start or end)`,
    };
  }
  return { ok: true, value: items };
}

/** Pure: persona file text → Persona, or the one-line reason it is rejected. */
export function parsePersonaFile(text: string, filePath: string): Parsed {
  const front = extractFrontmatter(text);
  if (!front.ok) return front;
  const yaml = parseYamlMapping(front.value);
  if (!yaml.ok) return yaml;
  const fm = yaml.value;

  const name = fm['name'];
  if (name === undefined || name === null || name === '') {
    return { ok: false, reason: 'name is missing' };
  }
  if (typeof name !== 'string') return { ok: false, reason: 'name must be a string' };
  if (!NAME_RE.test(name)) {
    return { ok: false, reason: `name ${JSON.stringify(name)} is invalid (allowed: letters, digits, _ . -)` };
  }

  const description = fm['description'] ?? '';
  if (typeof description !== 'string') return { ok: false, reason: 'description must be a string' };

  const mode = fm['permission_mode'];
  if (mode === undefined || mode === null) return { ok: false, reason: 'permission_mode is missing' };
  if (!PERMISSION_MODES.includes(mode as PermissionMode)) {
    return {
      ok: false,
      reason: `permission_mode ${JSON.stringify(mode)} invalid (expected ${PERMISSION_MODES.join(', ')})`,
    };
  }

  const tools = patternList(fm, 'tools');
  if (!tools.ok) return tools;
  const disallowed = patternList(fm, 'disallowed_tools');
  if (!disallowed.ok) return disallowed;

  return {
    ok: true,
    persona: {
      name,
      description,
      permission_mode: mode as PermissionMode,
      tools: tools.value,
      disallowed_tools: disallowed.value,
      source: filePath,
    },
  };
}

/** The `.md` files directly in `dir`, in lexical order; undefined (logged) if the dir is unusable. */
function listPersonaFiles(dir: string, logger: Logger): string[] | undefined {
  if (!path.isAbsolute(dir)) {
    logger.warn(`persona loader: skip non-absolute dir "${dir}"`);
    return undefined;
  }
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch {
    logger.warn(`persona loader: dir ${dir} not present, skipping`);
    return undefined;
  }
  if (!stat.isDirectory()) {
    logger.warn(`persona loader: ${dir} is not a directory, skipping`);
    return undefined;
  }
  try {
    return fs
      .readdirSync(dir)
      .filter((n) => n.endsWith('.md'))
      .sort()
      .map((n) => path.join(dir, n));
  } catch (e) {
    logger.warn(`persona loader: cannot read dir ${dir} (${(e as NodeJS.ErrnoException).code ?? 'error'}), skipping`);
    return undefined;
  }
}

function readPersonaFile(file: string): Parsed {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file); // follows symlinks: a link to a file counts as a file
  } catch (e) {
    return { ok: false, reason: `cannot stat (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (!stat.isFile()) return { ok: false, reason: 'not a regular file' };
  if (stat.size > MAX_PERSONA_FILE_BYTES) return { ok: false, reason: 'file is larger than 256 KiB' };
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return { ok: false, reason: `cannot read (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  return parsePersonaFile(text, file);
}

/**
 * Loads every persona file from `dirs` (in order; first definition of a name wins) plus the
 * built-in `default` unless a file defines it. Synchronous; never throws: bad input is logged.
 */
export function loadPersonas(dirs: string[], logger: Logger): Map<string, Persona> {
  const personas = new Map<string, Persona>();
  for (const dir of dirs) {
    for (const file of listPersonaFiles(dir, logger) ?? []) {
      const parsed = readPersonaFile(file);
      if (!parsed.ok) {
        logger.warn(`persona loader: skip ${file}: ${parsed.reason}`);
        continue;
      }
      const { persona } = parsed;
      if (personas.has(persona.name)) {
        logger.warn(`persona loader: persona "${persona.name}" already defined, skipping ${file}`);
        continue;
      }
      personas.set(persona.name, persona);
      logger.info(`persona loader: loaded persona "${persona.name}" from ${file}`);
    }
  }
  if (!personas.has(DEFAULT_PERSONA.name)) personas.set(DEFAULT_PERSONA.name, DEFAULT_PERSONA);
  return personas;
}
