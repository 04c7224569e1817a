import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  callableSkills,
  isToolFormat,
  toAnthropicTool,
  toMcpTool,
  toOpenAiTool,
  toolDefinitions,
  toToolDefinition,
} from '../../src/llm/tool-definitions.js';
import type { Persona } from '../../src/policy/personas.js';
import type { Skill, SkillClass } from '../../src/skills/types.js';
import { compileSchema } from '../../src/skills/schema-compiler.js';

const schema = { type: 'object', properties: { path: { type: 'string', default: '/' } }, required: ['path'] };

function skill(name: string, cls: SkillClass, extra: Partial<Skill> = {}): Skill {
  const compiled = compileSchema(schema);
  assert.ok(compiled.ok);
  return Object.freeze({
    source: 'native',
    name,
    description: `does ${name}`,
    class: cls,
    category: 'native',
    schema: Object.freeze(structuredClone(schema)),
    timeoutSeconds: 30,
    validate: compiled.validate,
    available: true,
    impl: async () => ({}),
    specPath: '/x/SKILL.md',
    ...extra,
  } as Skill);
}

function persona(mode: Persona['permission_mode'], tools: string[] = [], disallowed: string[] = []): Persona {
  return { name: 'p', description: '', permission_mode: mode, tools, disallowed_tools: disallowed, source: 'builtin' };
}

const safe = skill('disk_usage', 'safe');
const mutating = skill('disk_cleaner', 'mutating');
const dangerous = skill('purge_dir', 'dangerous');
const offline = skill('query_promql', 'safe', { available: false, unavailableReason: 'requires configuration X' });

describe('tool definitions per vendor', () => {
  test('openai: a function tool with the schema as parameters', () => {
    assert.deepEqual(toOpenAiTool(safe), {
      type: 'function',
      function: { name: 'disk_usage', description: 'does disk_usage', parameters: schema },
    });
  });

  test('anthropic: name, description and input_schema', () => {
    assert.deepEqual(toAnthropicTool(safe), { name: 'disk_usage', description: 'does disk_usage', input_schema: schema });
  });

  test('mcp: inputSchema and hints: readOnly for safe, destructive for dangerous, neither for mutating', () => {
    assert.deepEqual(toMcpTool(safe), {
      name: 'disk_usage',
      description: 'does disk_usage',
      inputSchema: schema,
      annotations: { readOnlyHint: true, destructiveHint: false },
    });
    assert.deepEqual(toMcpTool(mutating).annotations, { readOnlyHint: false, destructiveHint: false });
    assert.deepEqual(toMcpTool(dangerous).annotations, { readOnlyHint: false, destructiveHint: true });
  });

  test('a definition holds a copy of the schema, never the registry snapshot itself', () => {
    const def = toToolDefinition(safe, 'anthropic') as { input_schema: Record<string, unknown> };
    assert.notEqual(def.input_schema, safe.schema);
    def.input_schema.extra = true; // the copy is writable and the skill is untouched
    assert.equal('extra' in safe.schema, false);
  });

  test('only the three formats are formats', () => {
    assert.equal(isToolFormat('openai'), true);
    assert.equal(isToolFormat('mcp'), true);
    assert.equal(isToolFormat('gemini'), false);
    assert.equal(isToolFormat(undefined), false);
  });
});

describe('which skills a persona gets as tools', () => {
  const all = [safe, mutating, dangerous, offline];

  test('read-only: safe and available ones only', () => {
    assert.deepEqual(callableSkills(all, persona('read-only')).map((s) => s.name), ['disk_usage']);
  });

  test('mutating-with-confirm adds skills that need approval; dual-sign adds dangerous ones', () => {
    assert.deepEqual(callableSkills(all, persona('mutating-with-confirm')).map((s) => s.name), ['disk_cleaner', 'disk_usage']);
    assert.deepEqual(callableSkills(all, persona('dual-sign-required')).map((s) => s.name), ['disk_cleaner', 'disk_usage', 'purge_dir']);
  });

  test('tools and disallowed_tools lists (with patterns) narrow the list', () => {
    assert.deepEqual(callableSkills(all, persona('dual-sign-required', ['disk_*'])).map((s) => s.name), ['disk_cleaner', 'disk_usage']);
    assert.deepEqual(callableSkills(all, persona('dual-sign-required', [], ['*_cleaner', 'purge_*'])).map((s) => s.name), ['disk_usage']);
  });

  test('an unavailable skill is never offered, whatever the persona', () => {
    const names = callableSkills(all, persona('dual-sign-required')).map((s) => s.name);
    assert.equal(names.includes('query_promql'), false);
  });

  test('the result is sorted by name by code point whatever the input order', () => {
    const list = toolDefinitions([skill('b_x', 'safe'), skill('a_y', 'safe'), skill('a_x', 'safe')], persona('read-only'), 'anthropic');
    assert.deepEqual(list.map((d) => (d as { name: string }).name), ['a_x', 'a_y', 'b_x']);
  });
});
