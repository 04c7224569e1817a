/**
 * Prometheus metrics (CONTRACT section 10). Each Metrics owns its own Registry, so several apps
 * in one process (tests) never collide on metric names. Gauges are computed at scrape time from
 * `sources`, so they cannot drift from the registry and queue they describe.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricsSources {
  skillsBySource(): Record<'external' | 'native', number>;
  queueWaiting(): number;
  queueRunning(): number;
  /** Optional: a running total kept elsewhere (e.g. the loader's loaderErrorCount), read at scrape time. */
  loaderErrors?(): number;
}

/** Seconds: from fast probes up to the longest sensible skill timeout. */
export const DURATION_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export class Metrics {
  readonly registry = new Registry();
  private readonly executions: Counter<'skill' | 'status'>;
  private readonly duration: Histogram<'skill'>;
  private loaderErrorsRecorded = 0;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    this.executions = new Counter({
      name: 'ongrid_skill_executions_total',
      help: 'Executions that reached a final status, by skill and status',
      labelNames: ['skill', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'ongrid_skill_execution_duration_seconds',
      help: 'Wall time of executions that ran a process, by skill',
      labelNames: ['skill'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers,
    });
    const recorded = () => this.loaderErrorsRecorded;
    new Counter({
      name: 'ongrid_skill_loader_errors_total',
      help: 'Skill manifests the loader refused (parse or build errors), at boot and on reload',
      registers,
      collect() {
        // Both feeds are monotonic, so their sum is a valid counter value.
        this.reset();
        this.inc(recorded() + (sources.loaderErrors?.() ?? 0));
      },
    });
    new Gauge({
      name: 'ongrid_skills_registered',
      help: 'Skills currently registered, by source',
      labelNames: ['source'],
      registers,
      collect() {
        const counts = sources.skillsBySource();
        this.set({ source: 'external' }, counts.external);
        this.set({ source: 'native' }, counts.native);
      },
    });
    new Gauge({
      name: 'ongrid_execution_queue_depth',
      help: 'Executions waiting for a free slot',
      registers,
      collect() {
        this.set(sources.queueWaiting());
      },
    });
    new Gauge({
      name: 'ongrid_executions_running',
      help: 'Executions whose process is running now',
      registers,
      collect() {
        this.set(sources.queueRunning());
      },
    });
  }

  /** Call once per execution reaching a final status; `durationMs` is null when nothing ran. */
  executionFinished(skill: string, status: string, durationMs: number | null): void {
    this.executions.inc({ skill, status });
    if (durationMs !== null && Number.isFinite(durationMs) && durationMs >= 0) {
      this.duration.observe({ skill }, durationMs / 1000);
    }
  }

  loaderError(): void {
    this.loaderErrorsRecorded++;
  }
}
