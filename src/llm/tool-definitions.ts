/**
 * Skills as the tool definitions LLM vendors expect (CONTRACT section 9). Pure: the same
 * registry snapshot and persona always give the same list.
 */
import { decide } from '../policy/gate.js';
import type { Persona } from '../policy/personas.js';
import { compareCodePoints } from '../skills/registry.js';
import type { JsonSchema, Skill, SkillClass } from '../skills/types.js';

export const TOOL_FORMATS = ['openai', 'anthropic', 'mcp'] as const;
export type ToolFormat = (typeof TOOL_FORMATS)[number];
export const DEFAULT_TOOL_FORMAT: ToolFormat = 'openai';

/** What a definition is made of. */
export type ToolSource = Pick<Skill, 'name' | 'description' | 'class' | 'schema'>;

export interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; title?: string };
}

export type ToolDefinition = OpenAiTool | AnthropicTool | McpTool;

// A copy: registry schemas are frozen snapshots shared by every request.
const schemaOf = (s: ToolSource): JsonSchema => structuredClone(s.schema) as JsonSchema;

export function toOpenAiTool(s: ToolSource): OpenAiTool {
  return { type: 'function', function: { name: s.name, description: s.description, parameters: schemaOf(s) } };
}

export function toAnthropicTool(s: ToolSource): AnthropicTool {
  return { name: s.name, description: s.description, input_schema: schemaOf(s) };
}

export function mcpAnnotations(cls: SkillClass): McpTool['annotations'] {
  return { readOnlyHint: cls === 'safe', destructiveHint: cls === 'dangerous' };
}

export function toMcpTool(s: ToolSource): McpTool {
  return { name: s.name, description: s.description, inputSchema: schemaOf(s), annotations: mcpAnnotations(s.class) };
}

export function toToolDefinition(s: ToolSource, format: ToolFormat): ToolDefinition {
  switch (format) {
    case 'openai':
      return toOpenAiTool(s);
    case 'anthropic':
      return toAnthropicTool(s);
    case 'mcp':
      return toMcpTool(s);
  }
}

export function isToolFormat(v: unknown): v is ToolFormat {
  return typeof v === 'string' && (TOOL_FORMATS as readonly string[]).includes(v);
}

/**
 * The skills this persona may call: available, and not forbidden by its tools lists or its
 * permission mode (ones that need approval are callable: the call parks for a human). By name.
 */
export function callableSkills(skills: readonly Skill[], persona: Persona): Skill[] {
  return skills
    .filter((s) => s.available && decide(persona, s).access !== 'forbidden')
    .sort((a, b) => compareCodePoints(a.name, b.name));
}

export function toolDefinitions(skills: readonly Skill[], persona: Persona, format: ToolFormat): ToolDefinition[] {
  return callableSkills(skills, persona).map((s) => toToolDefinition(s, format));
}
