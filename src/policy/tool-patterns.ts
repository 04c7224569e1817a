import type { Persona } from './personas.js';

/**
 * Pure: does a `tools` / `disallowed_tools` entry cover this skill name?
 * `*` alone = every skill; `prefix*`, `*suffix` and `*part*` match by affix; anything else
 * is an exact name (a `*` inside a name is taken literally and so matches no skill name).
 */
export function matchesToolPattern(pattern: string, skill: string): boolean {
  if (pattern === '*') return true;
  const lead = pattern.startsWith('*');
  const trail = pattern.length > 1 && pattern.endsWith('*');
  const core = pattern.slice(lead ? 1 : 0, trail ? -1 : undefined);
  if (lead && trail) return skill.includes(core);
  if (trail) return skill.startsWith(core);
  if (lead) return skill.endsWith(core);
  return pattern === skill;
}

/** Pure: `disallowed_tools` wins; an empty `tools` allows every skill. */
export function isToolAllowed(
  persona: Pick<Persona, 'tools' | 'disallowed_tools'>,
  skill: string,
): boolean {
  if (persona.disallowed_tools.some((p) => matchesToolPattern(p, skill))) return false;
  return persona.tools.length === 0 || persona.tools.some((p) => matchesToolPattern(p, skill));
}
