/**
 * `http_probe`: is this URL answering, how fast, with what? One GET or HEAD, redirects not
 * followed unless asked, the body read only up to a cap. An unreachable target is a probe
 * result (`reachable: false`), not a failed execution; a cancelled execution aborts the request.
 */
import type { NativeImpl } from '../../types.js';
import { readCapped, type CappedBody } from './read-capped.js';

export const PROBE_HEADERS = [
  'content-type',
  'content-length',
  'server',
  'location',
  'cache-control',
  'date',
  'last-modified',
  'etag',
  'retry-after',
  'www-authenticate',
] as const;
export const PREVIEW_CHARS = 1024;
export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

export interface ProbeArgs {
  url: string;
  method: 'GET' | 'HEAD';
  timeout_ms: number;
  follow_redirects: boolean;
  max_body_bytes: number;
}

function probeArgs(args: Record<string, unknown>): ProbeArgs {
  const url = String(args.url ?? '');
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new Error(`url must be an absolute http(s) URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.username || parsed.password) throw new Error('url must not carry credentials');
  return {
    url,
    method: args.method === 'HEAD' ? 'HEAD' : 'GET',
    timeout_ms: typeof args.timeout_ms === 'number' ? args.timeout_ms : DEFAULT_TIMEOUT_MS,
    follow_redirects: args.follow_redirects === true,
    max_body_bytes: typeof args.max_body_bytes === 'number' ? args.max_body_bytes : DEFAULT_MAX_BODY_BYTES,
  };
}

/** The network error's own code (ECONNREFUSED, ENOTFOUND...) when undici wraps one. */
function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof DOMException && err.name === 'TimeoutError') return `no response within ${timeoutMs} ms`;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return `${cause.code}${typeof cause.message === 'string' ? `: ${cause.message}` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

function isTextual(contentType: string | null): boolean {
  return contentType === null || /^text\/|json|xml|javascript|x-www-form-urlencoded/i.test(contentType);
}

export const httpProbe: NativeImpl = async (rawArgs, ctx) => {
  const a = probeArgs(rawArgs);
  const timeout = AbortSignal.timeout(a.timeout_ms);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  const t0 = performance.now();
  const elapsed = () => Math.round(performance.now() - t0);
  ctx.log(`${a.method} ${a.url}`);

  let res: Response;
  try {
    res = await fetch(a.url, { method: a.method, redirect: a.follow_redirects ? 'follow' : 'manual', signal });
  } catch (err) {
    if (ctx.signal.aborted) throw new Error('probe aborted');
    const error = describeFailure(timeout.aborted ? timeout.reason : err, a.timeout_ms);
    ctx.log(`unreachable: ${error}`);
    return { url: a.url, method: a.method, reachable: false, error, latency_ms: elapsed() };
  }
  const latency = elapsed();

  const headers: Record<string, string> = {};
  for (const h of PROBE_HEADERS) {
    const v = res.headers.get(h);
    if (v !== null) headers[h] = v;
  }
  let body: CappedBody | undefined;
  let bodyError: string | undefined;
  try {
    body = await readCapped(res.body, a.max_body_bytes);
  } catch (err) {
    if (ctx.signal.aborted) throw new Error('probe aborted');
    bodyError = describeFailure(timeout.aborted ? timeout.reason : err, a.timeout_ms);
  }
  const contentType = res.headers.get('content-type');
  return {
    url: a.url,
    final_url: res.url || a.url,
    method: a.method,
    reachable: true,
    status: res.status,
    status_text: res.statusText,
    ok: res.status >= 200 && res.status < 300,
    latency_ms: latency,
    total_ms: elapsed(),
    headers,
    body_bytes: body?.length ?? 0,
    body_truncated: body?.truncated ?? false,
    ...(body && body.length > 0 && isTextual(contentType)
      ? { body_preview: body.bytes.toString('utf8').slice(0, PREVIEW_CHARS) }
      : {}),
    ...(bodyError !== undefined ? { body_error: bodyError } : {}),
  };
};
