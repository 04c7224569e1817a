/**
 * JSON Schemas of the API: the single source for request validation, response serialization
 * and the OpenAPI document. Shared shapes are registered once with `$id` (see registerSchemas)
 * and referenced by `{ $ref: 'Name#' }`.
 */
import type { FastifyInstance } from 'fastify';

const ts = { type: 'string', format: 'date-time', description: 'RFC 3339 UTC with milliseconds' } as const;
const nullableTs = { type: ['string', 'null'], format: 'date-time' } as const;

export const ErrorSchema = {
  $id: 'Error',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable snake_case error code' },
        message: { type: 'string' },
        details: {},
      },
    },
  },
} as const;

export const SkillSchema = {
  $id: 'Skill',
  type: 'object',
  required: ['name', 'description', 'class', 'category', 'source', 'schema', 'timeout_seconds', 'available'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    class: { type: 'string', enum: ['safe', 'mutating', 'dangerous'] },
    category: { type: 'string' },
    source: { type: 'string', enum: ['external', 'native'] },
    schema: { type: 'object', additionalProperties: true, description: 'JSON Schema of the args' },
    timeout_seconds: { type: 'integer' },
    available: { type: 'boolean' },
    unavailable_reason: { type: 'string' },
    manifest_path: { type: 'string' },
    entry: { type: 'string' },
    env_allow: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const ExecutionSchema = {
  $id: 'Execution',
  type: 'object',
  required: ['id', 'skill', 'class', 'persona', 'requested_by', 'status', 'args', 'approvals', 'approvals_required', 'created_at'],
  properties: {
    id: { type: 'string' },
    skill: { type: 'string' },
    class: { type: 'string', enum: ['safe', 'mutating', 'dangerous'] },
    persona: { type: 'string' },
    requested_by: { type: 'string' },
    status: {
      type: 'string',
      enum: ['pending_approval', 'queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'rejected', 'expired', 'interrupted'],
    },
    args: { type: 'object', additionalProperties: true },
    result: { description: 'The JSON the skill printed on stdout, verbatim; null until it succeeded' },
    error: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string' },
            message: { type: 'string' },
            exit_code: { type: 'integer' },
            stderr_tail: { type: 'string' },
          },
        },
      ],
    },
    approvals: {
      type: 'array',
      items: { type: 'object', required: ['subject', 'at'], properties: { subject: { type: 'string' }, at: ts } },
    },
    approvals_required: { type: 'integer' },
    definition_hash: { type: 'string', description: 'sha256 of the skill manifest and entry file at request time' },
    expires_at: { ...nullableTs, description: 'when a pending approval expires' },
    created_at: ts,
    started_at: nullableTs,
    finished_at: nullableTs,
    duration_ms: { type: ['integer', 'null'] },
  },
} as const;

export const EventSchema = {
  $id: 'Event',
  type: 'object',
  required: ['seq', 'at', 'type'],
  additionalProperties: true,
  properties: {
    seq: { type: 'integer' },
    at: ts,
    type: {
      type: 'string',
      enum: ['created', 'approval_requested', 'approved', 'rejected', 'expired', 'queued', 'started', 'stderr', 'exited', 'succeeded', 'failed', 'timed_out', 'cancelled', 'interrupted'],
    },
  },
} as const;

export const PersonaSchema = {
  $id: 'Persona',
  type: 'object',
  required: ['name', 'description', 'permission_mode', 'tools', 'disallowed_tools'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    permission_mode: { type: 'string', enum: ['read-only', 'mutating-with-confirm', 'dual-sign-required'] },
    tools: { type: 'array', items: { type: 'string' } },
    disallowed_tools: { type: 'array', items: { type: 'string' } },
    skills: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'access', 'approvals_required'],
        properties: {
          name: { type: 'string' },
          access: { type: 'string', enum: ['runs', 'needs_approval', 'forbidden'] },
          approvals_required: { type: 'integer' },
        },
      },
    },
  },
} as const;

export const ALL_SCHEMAS = [ErrorSchema, SkillSchema, ExecutionSchema, EventSchema, PersonaSchema];

export function registerSchemas(app: FastifyInstance): void {
  for (const s of ALL_SCHEMAS) app.addSchema(s);
}

export const ref = (id: string) => ({ $ref: `${id}#` }) as const;

/** Standard error responses, keyed by status, for route schemas. */
export function errors(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(statuses.map((s) => [s, ref('Error')]));
}

export function listOf(id: string) {
  return {
    type: 'object',
    required: ['items', 'total'],
    properties: { items: { type: 'array', items: ref(id) }, total: { type: 'integer' } },
  } as const;
}

export const nameParam = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', maxLength: 200 } },
} as const;

export const idParam = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', maxLength: 100 } },
} as const;
