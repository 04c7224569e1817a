/**
 * Every error the API answers with has a stable snake_case `code` and one HTTP status, defined
 * here and nowhere else. Routes and services throw ApiError; the one error handler in
 * http/error-handler.ts maps anything to the envelope `{"error": {code, message, details?}}`.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_args: 400,
  unknown_persona: 400,
  unauthorized: 401,
  skill_not_allowed: 403,
  class_not_permitted: 403,
  self_approval: 403,
  not_found: 404,
  method_not_allowed: 405,
  skill_not_found: 404,
  execution_not_found: 404,
  persona_not_found: 404,
  skill_unavailable: 409,
  execution_finished: 409,
  not_pending: 409,
  already_approved: 409,
  idempotency_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_executions: 429,
  internal_error: 500,
  not_ready: 503,
  shutting_down: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** Extra response headers (Retry-After...). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

export function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}
