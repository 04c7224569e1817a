/**
 * The MCP server (CONTRACT section 9): tools/list and tools/call over the same registry,
 * persona gating and executor as REST. One instance serves one HTTP request (stateless
 * Streamable HTTP), bound to that request's persona and subject.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { BaseLogger } from 'pino';
import type { Executor } from '../execution/executor.js';
import type { ExecutionRecord } from '../execution/types.js';
import { ApiError } from '../http/errors.js';
import { OPENAPI_INFO } from '../http/swagger.js';
import { toolDefinitions, type McpTool } from '../llm/tool-definitions.js';
import type { Persona } from '../policy/personas.js';
import type { SkillRegistry } from '../skills/registry.js';

export interface McpServerDeps {
  registry: SkillRegistry;
  executor: Executor;
  persona: Persona;
  subject: string;
  logger: Pick<BaseLogger, 'error'>;
}

export const MCP_SERVER_INFO = { name: 'ongrid-skills', version: OPENAPI_INFO.version };

const INSTRUCTIONS =
  'Each tool is an ongrid skill. Calls are validated against the tool schema, gated by the persona of ' +
  'this connection and recorded as executions (GET /v1/executions/{id}). A tool that is not read-only may ' +
  'answer that approval is needed: a human approves it with POST /v1/executions/{id}/approve.';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(t: string): CallToolResult['content'][number] {
  return { type: 'text', text: t };
}

/** Pure: an execution as it stands after `submit` → the tool call's answer. */
export function executionToToolResult(rec: ExecutionRecord): CallToolResult {
  const meta = { _meta: { execution_id: rec.id, status: rec.status } };
  if (rec.status === 'succeeded') {
    return {
      content: [text(JSON.stringify(rec.result ?? null))],
      ...(isPlainObject(rec.result) && { structuredContent: rec.result }),
      ...meta,
    };
  }
  if (rec.status === 'pending_approval') {
    const n = rec.approvals_required;
    return {
      content: [
        text(
          `Approval needed: execution ${rec.id} of "${rec.skill}" waits for ${n} approval${n === 1 ? '' : 's'} ` +
            `(POST /v1/executions/${rec.id}/approve by someone other than the requester); ` +
            `it runs once approved. Check its outcome with GET /v1/executions/${rec.id}.`,
        ),
      ],
      structuredContent: { execution_id: rec.id, status: rec.status, approvals_required: n, expires_at: rec.expires_at },
      ...meta,
    };
  }
  if (rec.status === 'queued' || rec.status === 'running') {
    // Only when another process owns it (an idempotent replay): not an error, not a result yet.
    return {
      content: [text(`Execution ${rec.id} of "${rec.skill}" is ${rec.status}; check GET /v1/executions/${rec.id}.`)],
      structuredContent: { execution_id: rec.id, status: rec.status },
      ...meta,
    };
  }
  const error = rec.error ?? { code: rec.status, message: `execution ${rec.status}` };
  return {
    isError: true,
    content: [text(`Execution ${rec.id} of "${rec.skill}" ${rec.status}: ${error.code}: ${error.message}`)],
    structuredContent: { execution_id: rec.id, status: rec.status, error },
    ...meta,
  };
}

/** Pure: a refused call (403, 404, 400 invalid_args, 409, 429...) → an error result. */
export function apiErrorToToolResult(err: ApiError): CallToolResult {
  const details = err.details === undefined ? '' : ` ${JSON.stringify(err.details)}`;
  return {
    isError: true,
    content: [text(`${err.code}: ${err.message}${details}`)],
    structuredContent: { error: { code: err.code, message: err.message, ...(err.details !== undefined && { details: err.details }) } },
  };
}

export function createMcpServer(d: McpServerDeps): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: toolDefinitions(d.registry.list(), d.persona, 'mcp') as McpTool[] as Tool[],
  }));

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    try {
      const { record } = await d.executor.submit({
        skill: req.params.name,
        args: req.params.arguments ?? {},
        persona: d.persona.name,
        subject: d.subject,
        wait: true,
      });
      return executionToToolResult(record);
    } catch (err) {
      if (err instanceof ApiError) return apiErrorToToolResult(err);
      d.logger.error({ err, skill: req.params.name }, 'mcp tools/call failed inside the service');
      return apiErrorToToolResult(new ApiError('internal_error', 'internal error'));
    }
  });

  return server;
}
