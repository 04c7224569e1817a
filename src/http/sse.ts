import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../app.js';
import { FINAL_STATUSES, type ExecutionEvent, type ExecutionRecord } from '../execution/types.js';

const FINAL_EVENT_TYPES = new Set<string>(FINAL_STATUSES);
const KEEPALIVE_MS = 15_000;

function frame(e: ExecutionEvent): string {
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}

/**
 * Past events from the store, then live ones from the bus, deduplicated by seq; the stream
 * ends after the final event. Subscribing before reading the past closes the gap between them.
 */
export async function streamEvents(
  services: Services,
  req: FastifyRequest,
  reply: FastifyReply,
  rec: ExecutionRecord,
  afterSeq: number,
  /** Open streams, so the server can end them when it closes (see sseStreams). */
  open?: Set<() => void>,
): Promise<void> {
  const { store, bus } = services;
  let lastSent = afterSeq;
  let live = false;
  const backlog: ExecutionEvent[] = [];
  let closed = false;

  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });

  let unsubscribe: () => void = () => {};
  const keepalive = setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS);
  const end = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepalive);
    unsubscribe();
    open?.delete(end);
    res.end();
  };
  open?.add(end);
  const send = (events: readonly ExecutionEvent[]) => {
    for (const e of events) {
      if (closed || e.seq <= lastSent) continue;
      res.write(frame(e));
      lastSent = e.seq;
      if (FINAL_EVENT_TYPES.has(e.type)) return end();
    }
  };

  unsubscribe = bus.subscribe(rec.id, (events) => (live ? send(events) : backlog.push(...events)));
  req.raw.on('close', end);

  try {
    send(await store.events(rec.id, afterSeq));
    if (closed) return;
    // Already final but its final event was sent before Last-Event-ID: nothing more will come.
    const now = await store.get(rec.id);
    send(backlog.sort((a, b) => a.seq - b.seq));
    live = true;
    if (!closed && now && FINAL_STATUSES.includes(now.status)) {
      send(await store.events(rec.id, lastSent));
      end();
    }
  } catch (err) {
    req.log.error({ err }, 'event stream failed');
    end();
  }
}

/**
 * Tracks the open streams of one Fastify instance and ends them when it closes: a stream on an
 * execution that waits for approval would otherwise hold the connection, and the shutdown,
 * forever. Clients reconnect with Last-Event-ID.
 */
export function sseStreams(app: FastifyInstance): Set<() => void> {
  const open = new Set<() => void>();
  app.addHook('preClose', (done) => {
    for (const end of [...open]) end();
    done();
  });
  return open;
}
