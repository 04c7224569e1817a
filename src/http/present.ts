/** Internal objects → the JSON shapes of CONTRACT sections 4, 5 and 12. */
import type { Skill } from '../skills/types.js';
import type { ExecutionRecord } from '../execution/types.js';

export function presentSkill(s: Skill): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: s.name,
    description: s.description,
    class: s.class,
    category: s.category,
    source: s.source,
    schema: s.schema,
    timeout_seconds: s.timeoutSeconds,
    available: s.available,
  };
  if (!s.available && s.unavailableReason) out.unavailable_reason = s.unavailableReason;
  if (s.source === 'external') {
    out.manifest_path = s.manifestPath;
    out.entry = s.entry;
    out.env_allow = [...s.envAllow];
  }
  return out;
}

/** The public Execution: internal bookkeeping (idempotency key, request hash) stays inside. */
export function presentExecution(r: ExecutionRecord): Record<string, unknown> {
  return {
    id: r.id,
    skill: r.skill,
    class: r.class,
    persona: r.persona,
    requested_by: r.requested_by,
    status: r.status,
    args: r.args,
    result: r.result ?? null,
    error: r.error,
    approvals: r.approvals,
    approvals_required: r.approvals_required,
    definition_hash: r.definition_hash,
    expires_at: r.expires_at,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    duration_ms: r.duration_ms,
  };
}
