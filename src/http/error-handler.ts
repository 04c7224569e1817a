import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from './errors.js';

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function validationDetails(issues: ValidationIssue[]): Array<{ path: string; message: string }> {
  return issues.map((i) => {
    const missing = i.params?.missingProperty;
    const base = i.instancePath ?? '';
    return {
      path: typeof missing === 'string' ? `${base}/${missing}` : base,
      message: i.message ?? 'invalid',
    };
  });
}

/** Maps any error to the envelope of CONTRACT section 11. The only place that does. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ApiError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) {
      if (err.headers) reply.headers(err.headers);
      return reply.code(err.status).send(errorBody(err.code, err.message, err.details));
    }
    const fe = err as FastifyError & { validationContext?: string };
    if (fe.validation) {
      const where = fe.validationContext ?? 'request';
      return reply
        .code(400)
        .send(errorBody('invalid_request', `invalid ${where}: ${fe.message}`, validationDetails(fe.validation)));
    }
    switch (fe.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(errorBody('payload_too_large', 'request body is over the 1 MiB limit'));
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return reply.code(400).send(errorBody('invalid_json', 'request body is not valid JSON'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(errorBody('unsupported_media_type', 'request body must be application/json'));
    }
    const status = fe.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Framework 4xx (bad headers, bad content length...): keep the status, never the stack.
      return reply.code(status).send(errorBody('invalid_request', fe.message));
    }
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send(errorBody('internal_error', 'internal error'));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody('not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  });
}
