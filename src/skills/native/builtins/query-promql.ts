/**
 * `query_promql`: a PromQL instant query against the Prometheus at ONGRID_PROMETHEUS_URL
 * (`GET <base>/api/v1/query`). Answers Prometheus's own `resultType` and `result`; a query
 * Prometheus rejects fails the execution with its error message.
 */
import type { NativeImpl } from '../../types.js';
import { readCapped } from './read-capped.js';

export const PROMETHEUS_URL_VAR = 'ONGRID_PROMETHEUS_URL';
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

interface PromResponse {
  status?: unknown;
  data?: { resultType?: unknown; result?: unknown };
  errorType?: unknown;
  error?: unknown;
  warnings?: unknown;
}

/** `<base>/api/v1/query?query=...` keeping any path prefix of the base (a reverse proxy's). */
export function queryUrl(base: string, query: string, time?: string): URL {
  const url = new URL(base.endsWith('/') ? base : `${base}/`);
  const out = new URL('api/v1/query', url);
  out.searchParams.set('query', query);
  if (time !== undefined) out.searchParams.set('time', time);
  return out;
}

export function makeQueryPromql(env: NodeJS.ProcessEnv): NativeImpl {
  return async (args, ctx) => {
    const base = (env[PROMETHEUS_URL_VAR] ?? '').trim();
    if (base === '') throw new Error(`${PROMETHEUS_URL_VAR} is not set`);
    if (!URL.canParse(base)) throw new Error(`${PROMETHEUS_URL_VAR} is not a valid URL`);
    const query = String(args.query ?? '');
    const time = typeof args.time === 'string' ? args.time : undefined;
    const timeoutMs = typeof args.timeout_ms === 'number' ? args.timeout_ms : DEFAULT_QUERY_TIMEOUT_MS;
    const url = queryUrl(base, query, time);
    ctx.log(`query ${query}`);

    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
    let res: Response;
    try {
      res = await fetch(url, { headers: { accept: 'application/json' }, signal });
    } catch (err) {
      const cause = (err as { cause?: { code?: unknown } }).cause;
      const why = err instanceof DOMException && err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : typeof cause?.code === 'string' ? cause.code : (err as Error).message;
      throw new Error(`prometheus unreachable: ${why}`);
    }
    const body = await readCapped(res.body, MAX_RESPONSE_BYTES + 1);
    if (body.length > MAX_RESPONSE_BYTES) throw new Error(`prometheus answer is over ${MAX_RESPONSE_BYTES} bytes; narrow the query`);
    let parsed: PromResponse;
    try {
      parsed = JSON.parse(body.bytes.toString('utf8')) as PromResponse;
    } catch {
      throw new Error(`prometheus answered HTTP ${res.status} without JSON`);
    }
    if (parsed.status !== 'success' || !parsed.data) {
      const type = typeof parsed.errorType === 'string' ? parsed.errorType : `HTTP ${res.status}`;
      throw new Error(`prometheus rejected the query (${type}): ${typeof parsed.error === 'string' ? parsed.error : 'no message'}`);
    }
    const result = parsed.data.result;
    const warnings = Array.isArray(parsed.warnings) ? parsed.warnings : [];
    for (const w of warnings) ctx.log(`warning: ${String(w)}`);
    return {
      query,
      result_type: parsed.data.resultType ?? null,
      result: result ?? null,
      ...(Array.isArray(result) ? { series: result.length } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  };
}
