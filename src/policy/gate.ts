import type { SkillClass } from '../skills/types.js';
import type { PermissionMode, Persona } from './personas.js';
import { matchesToolPattern } from './tool-patterns.js';

export type Access = 'runs' | 'needs_approval' | 'forbidden';

export type GateDecision =
  | { access: 'runs'; approvals_required: 0 }
  | { access: 'needs_approval'; approvals_required: number }
  | {
      access: 'forbidden';
      approvals_required: 0;
      code: 'skill_not_allowed' | 'class_not_permitted';
      message: string;
    };

/** CONTRACT section 7: approvals needed per mode and class; 'forbidden' = class_not_permitted. */
export const GATE_TABLE: Readonly<Record<PermissionMode, Readonly<Record<SkillClass, number | 'forbidden'>>>> = {
  'read-only': { safe: 0, mutating: 'forbidden', dangerous: 'forbidden' },
  'mutating-with-confirm': { safe: 0, mutating: 1, dangerous: 'forbidden' },
  'dual-sign-required': { safe: 0, mutating: 1, dangerous: 2 },
};

/** Why the tools lists exclude this skill, or undefined when they allow it. */
function toolsRuleViolated(persona: Persona, skill: string): string | undefined {
  const deny = persona.disallowed_tools.find((p) => matchesToolPattern(p, skill));
  if (deny !== undefined) return `it matches "${deny}" in disallowed_tools`;
  if (persona.tools.length > 0 && !persona.tools.some((p) => matchesToolPattern(p, skill))) {
    return 'it is not in its tools list';
  }
  return undefined;
}

/** Pure: may this persona call this skill, and with how many approvals? Tools lists first. */
export function decide(persona: Persona, skill: { name: string; class: SkillClass }): GateDecision {
  const why = toolsRuleViolated(persona, skill.name);
  if (why !== undefined) {
    return {
      access: 'forbidden',
      approvals_required: 0,
      code: 'skill_not_allowed',
      message: `persona "${persona.name}" may not call skill "${skill.name}": ${why}`,
    };
  }
  const rule = GATE_TABLE[persona.permission_mode][skill.class];
  if (rule === 'forbidden') {
    return {
      access: 'forbidden',
      approvals_required: 0,
      code: 'class_not_permitted',
      message:
        `persona "${persona.name}" (${persona.permission_mode}) may not run ${skill.class} ` +
        `skill "${skill.name}": its permission mode does not permit the ${skill.class} class`,
    };
  }
  if (rule === 0) return { access: 'runs', approvals_required: 0 };
  return { access: 'needs_approval', approvals_required: rule };
}
