/**
 * The one execution path (ARCHITECTURE "One path for every execution"). REST, MCP and native
 * skills all come here; nothing else creates an execution or starts a skill.
 *
 *   submit: persona → skill → available → gate → args → (idempotency) → record → park | queue
 *   approve/reject/cancel: compare-and-set transitions in the store, then queue or stop.
 */
import { randomUUID, createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { ErrorObject } from 'ajv';
import type { Logger } from 'pino';
import { ApiError } from '../http/errors.js';
import type { SkillRegistry } from '../skills/registry.js';
import type { Skill } from '../skills/types.js';
import type { Persona } from '../policy/personas.js';
import { decide } from '../policy/gate.js';
import { definitionHash } from './definition-hash.js';
import type { EventBus } from './event-bus.js';
import { EventWriter } from './event-writer.js';
import type { ExecutionQueue } from './queue.js';
import { runSkill } from './run-skill.js';
import type { ExecutionPatch, ExecutionStore, StoredExecution } from './store.js';
import { isFinal, nowIso, type EventType, type ExecutionRecord, type ExecutionStatus } from './types.js';

export interface PersonaSource {
  get(name: string): Persona | undefined;
}

export interface ExecutorDeps {
  registry: SkillRegistry;
  personas: PersonaSource;
  store: ExecutionStore;
  queue: ExecutionQueue;
  bus: EventBus;
  logger: Logger;
  killGraceMs: number;
  approvalTtlSeconds: number;
  defaultPersona: string;
  env?: NodeJS.ProcessEnv;
  /** Called once per execution that reached a final status in this process (metrics). */
  onFinished?: (rec: ExecutionRecord) => void;
}

export interface SubmitRequest {
  skill: string;
  args?: Record<string, unknown>;
  persona?: string;
  subject: string;
  wait: boolean;
  idempotencyKey?: string;
}

export interface SubmitResult {
  record: ExecutionRecord;
  /** True when an Idempotency-Key matched an earlier execution. */
  replayed: boolean;
}

const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
type Ev = { type: EventType; at?: string; data?: Record<string, unknown> };

export class Executor {
  private readonly running = new Map<string, AbortController>();
  /** Places promised to requests that passed admission control but are not queued yet. */
  private reserved = 0;
  private readonly waiters = new Map<string, Array<(r: ExecutionRecord) => void>>();
  private accepting = true;

  constructor(private readonly d: ExecutorDeps) {}

  /** Resolves the persona a request acts as, or throws 400 unknown_persona. */
  persona(name: string | undefined): Persona {
    const n = name && name.trim() !== '' ? name.trim() : this.d.defaultPersona;
    const p = this.d.personas.get(n);
    if (!p) throw new ApiError('unknown_persona', `no persona named "${n}"`);
    return p;
  }

  /** Checks in CONTRACT order after auth: persona, skill, available, allowed. */
  resolve(skillName: string, personaName: string | undefined): { persona: Persona; skill: Skill; approvals: number } {
    const persona = this.persona(personaName);
    const skill = this.d.registry.get(skillName);
    if (!skill) throw new ApiError('skill_not_found', `no skill named "${skillName}"`);
    if (!skill.available) {
      throw new ApiError('skill_unavailable', `skill "${skill.name}" is unavailable: ${skill.unavailableReason ?? 'requirements not met'}`);
    }
    const g = decide(persona, skill);
    if (g.access === 'forbidden') throw new ApiError(g.code, g.message);
    return { persona, skill, approvals: g.approvals_required };
  }

  async submit(req: SubmitRequest): Promise<SubmitResult> {
    if (!this.accepting) throw new ApiError('shutting_down', 'the service is shutting down; no new executions');
    const { persona, skill, approvals } = this.resolve(req.skill, req.persona);

    const requested = req.args ?? {};
    const requestHash = sha256(stringify(requested) ?? '{}');
    // Defaults are applied to a copy: the record keeps what the child receives.
    const args = structuredClone(requested);
    if (!skill.validate(args)) {
      throw new ApiError('invalid_args', `args do not match the schema of "${skill.name}"`, argErrors(skill.validate.errors));
    }

    if (req.idempotencyKey !== undefined) {
      const prior = await this.d.store.findIdempotent(req.subject, skill.name, req.idempotencyKey, sinceIso());
      if (prior) return this.replay(prior, requestHash, req.wait);
    }
    // Admission control before anything is written: a 429 leaves no trace, so a retry is safe.
    // The place is reserved now, synchronously: the awaits below would otherwise let every
    // concurrent request pass the same check before any of them reaches the queue.
    if (approvals > 0) return this.create(req, skill, persona.name, approvals, args, requestHash);
    if (!this.hasRoom()) throw this.tooMany();
    this.reserved++;
    let handedOver = false;
    try {
      return await this.create(req, skill, persona.name, approvals, args, requestHash, () => {
        this.reserved--;
        handedOver = true;
      });
    } finally {
      if (!handedOver) this.reserved--;
    }
  }

  /** Admitted work (running, waiting, or reserved by a request still on its way) against the limits. */
  private hasRoom(): boolean {
    const q = this.d.queue;
    return q.running + q.waiting + this.reserved < q.maxRunning + q.maxQueued;
  }

  /**
   * Writes the record (or finds the idempotent twin), then parks or queues it. `handOver` is
   * called at the moment the reserved place becomes a real one in the queue.
   */
  private async create(
    req: SubmitRequest,
    skill: Skill,
    personaName: string,
    approvals: number,
    args: Record<string, unknown>,
    requestHash: string,
    handOver?: () => void,
  ): Promise<SubmitResult> {
    const now = nowIso();
    const rec: ExecutionRecord = {
      id: randomUUID(),
      skill: skill.name,
      class: skill.class,
      persona: personaName,
      requested_by: req.subject,
      status: approvals > 0 ? 'pending_approval' : 'queued',
      args,
      result: null,
      error: null,
      approvals: [],
      approvals_required: approvals,
      created_at: now,
      started_at: null,
      finished_at: null,
      duration_ms: null,
      definition_hash: await definitionHash(skill),
      expires_at: approvals > 0 ? new Date(Date.now() + this.d.approvalTtlSeconds * 1000).toISOString() : null,
      idempotency_key: req.idempotencyKey ?? null,
      request_hash: requestHash,
    };
    const events: Ev[] = [{ type: 'created', at: now, data: { subject: req.subject, persona: personaName } }];
    const since = sinceIso();

    if (approvals > 0) {
      events.push({ type: 'approval_requested', at: now, data: { approvals_required: approvals } });
      const { record, created } = await this.d.store.create(rec, events, since);
      if (!created) return this.replay(record, requestHash, req.wait);
      this.publish(record, events);
      return { record, replayed: false };
    }
    events.push({ type: 'queued', at: now });
    // Claimed (and its waiter registered) before anything can finish it: a concurrent replay of
    // the same Idempotency-Key must find it local and wait for it, and no end can be missed.
    const controller = this.claim(rec.id);
    const done = req.wait ? this.waiter(rec.id) : undefined;
    const forget = () => {
      this.running.delete(rec.id);
      this.waiters.delete(rec.id);
    };
    let written: { record: StoredExecution; created: boolean };
    try {
      written = this.slotFree()
        ? await this.createStarted(rec, events, since, skill, controller, handOver)
        : await this.createQueued(rec, events, since, skill, controller, handOver);
    } catch (err) {
      forget();
      throw err;
    }
    if (!written.created) {
      forget();
      return this.replay(written.record, requestHash, req.wait);
    }
    return { record: done ? await done : written.record, replayed: false };
  }

  /** A slot is free and nobody waits for one: the next task offered starts at once. */
  private slotFree(): boolean {
    const q = this.d.queue;
    return q.running < q.maxRunning && q.waiting === 0;
  }

  /** Writes the record as queued, then hands it to the queue. */
  private async createQueued(
    rec: ExecutionRecord,
    events: Ev[],
    since: string,
    skill: Skill,
    controller: AbortController,
    handOver?: () => void,
  ): Promise<{ record: StoredExecution; created: boolean }> {
    const written = await this.d.store.create(rec, events, since);
    if (!written.created) return written;
    this.publish(written.record, events);
    this.enqueue(rec.id, skill, controller);
    handOver?.();
    return written;
  }

  /**
   * Takes the free slot first, then writes the record already started (created, queued,
   * started in one write): one store write and one queue hop fewer per execution. The
   * record is still written before the child is spawned.
   */
  private createStarted(
    rec: ExecutionRecord,
    events: Ev[],
    since: string,
    skill: Skill,
    controller: AbortController,
    handOver?: () => void,
  ): Promise<{ record: StoredExecution; created: boolean }> {
    const started: ExecutionRecord = { ...rec, status: 'running', started_at: rec.created_at };
    const all: Ev[] = [...events, { type: 'started', at: rec.created_at }];
    return new Promise((resolve, reject) => {
      const task = async () => {
        let written: { record: StoredExecution; created: boolean };
        try {
          written = await this.d.store.create(started, all, since);
        } catch (err) {
          reject(err);
          return;
        }
        resolve(written);
        if (!written.created) return; // an idempotent twin: the slot is given back unused
        this.publish(written.record, all);
        await this.run(rec.id, skill, controller, written.record);
      };
      // Always admitted: the slot was free (slotFree) and this runs synchronously after it.
      if (!this.d.queue.tryRun(rec.id, task, true)) reject(new Error('queue refused a free slot'));
      handOver?.();
    });
  }

  private async replay(prior: ExecutionRecord, requestHash: string, wait: boolean): Promise<SubmitResult> {
    if (prior.request_hash !== requestHash) {
      throw new ApiError('idempotency_conflict', 'this Idempotency-Key was used with other args');
    }
    const record = wait && (prior.status === 'queued' || prior.status === 'running') ? await this.waitFinal(prior.id) : prior;
    return { record, replayed: true };
  }

  private tooMany(): ApiError {
    const retry = String(this.d.queue.retryAfterSeconds());
    return new ApiError('too_many_executions', 'the execution queue is full; retry later', undefined, { 'retry-after': retry });
  }

  async get(id: string): Promise<StoredExecution> {
    const r = await this.d.store.get(id);
    if (!r) throw new ApiError('execution_not_found', `no execution with id "${id}"`);
    return r;
  }

  /** A promise settled by the next `settle(id)`. */
  private waiter(id: string): Promise<ExecutionRecord> {
    return new Promise<ExecutionRecord>((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push(resolve);
      this.waiters.set(id, list);
    });
  }

  /** Resolves with the record once it is final (or immediately when it already is). */
  async waitFinal(id: string): Promise<ExecutionRecord> {
    const p = this.waiter(id);
    const now = await this.get(id);
    if (isFinal(now.status) || now.status === 'pending_approval' || !this.isLocal(id)) {
      this.settle(id, now);
      return now;
    }
    return p;
  }

  private isLocal(id: string): boolean {
    return this.running.has(id) || this.d.queue.isWaiting(id);
  }

  private settle(id: string, rec: ExecutionRecord): void {
    const list = this.waiters.get(id);
    this.waiters.delete(id);
    for (const w of list ?? []) w(rec);
  }

  /** Marks an execution as owned by this process (waiters wait for it; cancel can abort it). */
  private claim(id: string): AbortController {
    const controller = new AbortController();
    this.running.set(id, controller);
    return controller;
  }

  /**
   * Queues an admitted execution. Admission was decided earlier (a reserved place, or enough
   * approvals), so it may go past the waiting limit, never past the running limit.
   */
  private enqueue(id: string, skill: Skill, controller: AbortController): void {
    this.d.queue.tryRun(id, () => this.run(id, skill, controller), true);
  }

  /** Runs an admitted execution in its slot; `started` when the record was written as running already. */
  private async run(id: string, skill: Skill, controller: AbortController, startedRec?: StoredExecution): Promise<void> {
    const events = new EventWriter(id, this.d.store, this.d.bus);
    let last: ExecutionRecord | undefined;
    try {
      const started =
        startedRec ?? (await this.transition(id, ['queued'], { status: 'running', started_at: nowIso() }, [{ type: 'started' }]));
      if (!started) return; // cancelled while waiting
      const t0 = performance.now();
      const out = await runSkill({
        skill,
        args: started.args,
        events,
        signal: controller.signal,
        killGraceMs: this.d.killGraceMs,
        env: this.d.env ?? process.env,
      });
      // Every stderr line is stored before `exited`, which goes in with the final status.
      await events.flush();
      const fin = await this.transition(
        id,
        ['running'],
        {
          status: out.status,
          result: out.result,
          error: out.error,
          finished_at: nowIso(),
          duration_ms: Math.round(performance.now() - t0),
        },
        [
          ...(out.exited ? [{ type: 'exited' as const, data: out.exited }] : []),
          { type: out.status, ...(out.error ? { data: { code: out.error.code } } : {}) },
        ],
      );
      if (fin) {
        last = fin;
        this.finished(fin);
      }
    } catch (err) {
      this.d.logger.error({ err, execution_id: id }, 'execution failed inside the service');
      const fin = await this.transition(
        id,
        ['queued', 'running'],
        { status: 'failed', error: { code: 'internal_error', message: 'internal error' }, finished_at: nowIso() },
        [{ type: 'failed', data: { code: 'internal_error' } }],
      ).catch(() => undefined);
      if (fin) this.finished(fin);
    } finally {
      this.running.delete(id);
      last ??= await this.d.store.get(id).catch(() => undefined);
      if (last) this.settle(id, last);
    }
  }

  private finished(rec: ExecutionRecord): void {
    this.d.logger.info(
      { skill: rec.skill, execution_id: rec.id, status: rec.status, duration_ms: rec.duration_ms, persona: rec.persona, requested_by: rec.requested_by },
      `execution ${rec.status}: ${rec.skill} ${rec.id}`,
    );
    this.d.onFinished?.(rec);
  }

  /** Compare-and-set in the store, then publish the events it appended. */
  private async transition(
    id: string,
    from: readonly ExecutionStatus[],
    patch: ExecutionPatch,
    events: Ev[],
  ): Promise<StoredExecution | undefined> {
    const at = nowIso();
    const stamped = events.map((e) => (e.at ? e : { ...e, at }));
    const rec = await this.d.store.transition(id, from, patch, stamped);
    if (rec) this.publish(rec, stamped);
    return rec;
  }

  /**
   * Publishes the events a write just appended (the last `events.length` seqs of `rec`), shaped
   * as the store serves them; built here rather than read back, which would cost a query each.
   */
  private publish(rec: StoredExecution, events: readonly Ev[]): void {
    if (events.length === 0) return;
    const first = rec.last_seq - events.length + 1;
    this.d.bus.publish(
      rec.id,
      events.map((e, i) => {
        const head = { seq: first + i, at: e.at ?? rec.created_at, type: e.type };
        return e.data && Object.keys(e.data).length > 0 ? { ...head, ...e.data, ...head } : head;
      }),
    );
  }

  private async publishFrom(id: string, afterSeq: number): Promise<void> {
    this.d.bus.publish(id, await this.d.store.events(id, afterSeq));
  }

  async approve(id: string, subject: string): Promise<ExecutionRecord> {
    const rec = await this.get(id);
    if (await this.expireIfDue(rec)) throw new ApiError('not_pending', 'execution is expired, not pending approval');
    if (rec.status !== 'pending_approval') throw new ApiError('not_pending', `execution is ${rec.status}, not pending approval`);
    if (rec.requested_by === subject) throw new ApiError('self_approval', 'the requester cannot approve their own execution');
    const r = await this.d.store.addApproval(id, { subject, at: nowIso() });
    if (r.outcome === 'not_found') throw new ApiError('execution_not_found', `no execution with id "${id}"`);
    if (r.outcome === 'not_pending') throw new ApiError('not_pending', 'execution is no longer pending approval');
    if (r.outcome === 'duplicate') throw new ApiError('already_approved', `${subject} has already approved this execution`);
    const after = r.record!;
    // The store appended exactly one `approved` event; read it back in the store's own shape.
    await this.publishFrom(id, after.last_seq - 1);
    if (after.approvals.length < after.approvals_required) return after;
    return this.release(after);
  }

  /** Enough approvals: run it if the definition is still what was approved. */
  private async release(rec: ExecutionRecord): Promise<ExecutionRecord> {
    const skill = this.d.registry.get(rec.skill);
    const current = skill ? await definitionHash(skill) : 'gone';
    if (!skill || current !== rec.definition_hash) {
      const rej = await this.transition(
        rec.id,
        ['pending_approval'],
        {
          status: 'rejected',
          finished_at: nowIso(),
          error: { code: 'definition_changed', message: `skill "${rec.skill}" changed after it was requested; request it again` },
        },
        [{ type: 'rejected', data: { reason: 'definition_changed' } }],
      );
      if (rej) this.finished(rej);
      return rej ?? this.get(rec.id);
    }
    const queued = await this.transition(rec.id, ['pending_approval'], { status: 'queued', expires_at: null }, [{ type: 'queued' }]);
    if (!queued) return this.get(rec.id); // a racing approver released it already
    this.enqueue(rec.id, skill, this.claim(rec.id));
    return queued;
  }

  async reject(id: string, subject: string, reason?: string): Promise<ExecutionRecord> {
    if (await this.expireIfDue(await this.get(id))) throw new ApiError('not_pending', 'execution is expired, not pending approval');
    const rec = await this.transition(
      id,
      ['pending_approval'],
      { status: 'rejected', finished_at: nowIso(), error: { code: 'rejected', message: reason ? `rejected by ${subject}: ${reason}` : `rejected by ${subject}` } },
      [{ type: 'rejected', data: { subject, ...(reason ? { reason } : {}) } }],
    );
    if (rec) {
      this.finished(rec);
      return rec;
    }
    const now = await this.get(id);
    throw new ApiError('not_pending', `execution is ${now.status}, not pending approval`);
  }

  async cancel(id: string): Promise<ExecutionRecord> {
    const cur = await this.get(id);
    if (isFinal(cur.status)) throw new ApiError('execution_finished', `execution already ${cur.status}`);
    const stopped = await this.transition(
      id,
      ['pending_approval', 'queued'],
      { status: 'cancelled', finished_at: nowIso(), error: { code: 'cancelled', message: 'cancelled before it ran' } },
      [{ type: 'cancelled' }],
    );
    if (stopped) {
      this.d.queue.cancel(id);
      this.running.delete(id);
      this.finished(stopped);
      this.settle(id, stopped);
      return stopped;
    }
    const controller = this.running.get(id);
    if (controller) {
      controller.abort(new Error('cancelled'));
      return this.waitFinal(id);
    }
    const now = await this.get(id);
    if (isFinal(now.status)) throw new ApiError('execution_finished', `execution already ${now.status}`);
    return now;
  }

  /** Pending approvals past their TTL become expired (also ones that expired while down). */
  async expireDue(now = new Date()): Promise<number> {
    let n = 0;
    for (const rec of await this.d.store.listByStatus('pending_approval')) {
      if (await this.expireIfDue(rec, now)) n++;
    }
    return n;
  }

  /**
   * Expires one pending execution whose TTL has passed. Also called by approve/reject, so a
   * decision arriving between the TTL and the next sweep can never release an expired request.
   */
  private async expireIfDue(rec: ExecutionRecord, now = new Date()): Promise<boolean> {
    if (rec.status !== 'pending_approval' || !rec.expires_at || new Date(rec.expires_at) > now) return false;
    const exp = await this.transition(
      rec.id,
      ['pending_approval'],
      { status: 'expired', finished_at: nowIso(), error: { code: 'expired', message: 'no decision before the approval TTL' } },
      [{ type: 'expired' }],
    );
    if (exp) this.finished(exp);
    return exp !== undefined;
  }

  /** At start: executions a dead process left queued or running are interrupted. */
  async recover(): Promise<number> {
    let n = 0;
    for (const status of ['queued', 'running'] as const) {
      for (const rec of await this.d.store.listByStatus(status)) {
        const r = await this.transition(
          rec.id,
          [status],
          { status: 'interrupted', finished_at: nowIso(), error: { code: 'interrupted', message: 'the service stopped while this execution was ' + status } },
          [{ type: 'interrupted' }],
        );
        if (r) n++;
      }
    }
    return n;
  }

  /** Stops admitting new executions and resolves when running and queued ones are done. */
  async drain(): Promise<void> {
    this.accepting = false;
    await this.d.queue.idle();
  }

  get isAccepting(): boolean {
    return this.accepting;
  }
}

/** ajv errors → `[{path, message}]`, `path` the JSON Pointer of the offending value. */
function argErrors(errors: ErrorObject[] | null | undefined): Array<{ path: string; message: string }> {
  return (errors ?? []).map((e) => {
    // required / additionalProperties report the parent object; point at the property itself.
    const prop = e.params?.missingProperty ?? e.params?.additionalProperty ?? e.params?.unevaluatedProperty;
    const path = typeof prop === 'string' ? `${e.instancePath}/${prop.replace(/~/g, '~0').replace(/\//g, '~1')}` : e.instancePath;
    return { path, message: e.message ?? 'invalid' };
  });
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function sinceIso(): string {
  return new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString();
}
