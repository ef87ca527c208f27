import client from 'prom-client';
import type { Db } from '../../db/client.ts';
import { createMetricsRepository } from './metrics.repository.ts';

type Sources = {
  db: Db;
  /** Seconds since the oldest unsettled stretch of a running pay-as-you-go meter began. */
  settlementLagSeconds: () => Promise<number>;
};

/**
 * The Prometheus metrics of one server (GET /metrics, prom-client). Its own registry, so several
 * apps in one process (tests) don't share counters. Counted in-process: HTTP latency by route
 * pattern and status class, job durations by kind and outcome, ledger postings by kind. Read from
 * the database at scrape time: job queue depth, instances by state and driver, settlement lag,
 * payment notifications by method and outcome.
 */
export function createMetrics() {
  const registry = new client.Registry();
  const httpDuration = new client.Histogram({
    name: 'suanli_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern and status class',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const jobDuration = new client.Histogram({
    name: 'suanli_job_duration_seconds',
    help: 'Job attempt duration by kind and outcome (done, retry, failed)',
    labelNames: ['kind', 'outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const ledgerPostings = new client.Counter({ name: 'suanli_ledger_postings_total', help: 'Ledger entries posted by this process, by kind', labelNames: ['kind'] as const, registers: [registry] });

  // One child per label set, looked up by a string key: the per-request cost is a Map lookup and an observe.
  const httpChildren = new Map<string, client.Histogram.Internal<'method' | 'route' | 'status'>>();

  return {
    registry,
    /** Fastify onResponse: `route` is the pattern (`/api/v1/order/:id`), never the raw URL. */
    observeHttp(method: string, route: string | undefined, statusCode: number, ms: number) {
      const status = `${Math.floor(statusCode / 100)}xx`;
      const r = route ?? 'unmatched';
      const key = `${method} ${r} ${status}`;
      let child = httpChildren.get(key);
      if (!child) {
        child = httpDuration.labels({ method, route: r, status });
        httpChildren.set(key, child);
      }
      child.observe(ms / 1000);
    },
    observeJob(kind: string, seconds: number, outcome: 'done' | 'retry' | 'failed') {
      jobDuration.observe({ kind, outcome }, seconds);
    },
    countPostings(kind: string, n: number) {
      ledgerPostings.inc({ kind }, n);
    },
    /** The gauges read at scrape time (set once the services exist). */
    addScrapeSources(s: Sources) {
      const repo = createMetricsRepository(s.db);
      new client.Gauge({
        name: 'suanli_job_queue_depth',
        help: 'Jobs waiting or running, by kind and state',
        labelNames: ['kind', 'state'] as const,
        registers: [registry],
        async collect() {
          this.reset();
          for (const r of await repo.jobDepth()) this.set({ kind: r.kind, state: r.state }, r.n);
        },
      });
      new client.Gauge({
        name: 'suanli_instances',
        help: 'Instances by state and compute driver',
        labelNames: ['state', 'driver'] as const,
        registers: [registry],
        async collect() {
          this.reset();
          for (const r of await repo.instancesByState()) this.set({ state: r.state, driver: r.driver }, r.n);
        },
      });
      new client.Gauge({
        name: 'suanli_settlement_lag_seconds',
        help: 'Seconds since the oldest unsettled stretch of a running pay-as-you-go instance began (about 60 while settling every minute)',
        registers: [registry],
        async collect() {
          this.set(await s.settlementLagSeconds());
        },
      });
      new client.Counter({
        name: 'suanli_payment_notifications_total',
        help: 'Payment notifications received (all kept in payment_notifications), by method and outcome',
        labelNames: ['method', 'outcome'] as const,
        registers: [registry],
        async collect() {
          this.reset();
          for (const r of await repo.paymentNotifications()) this.inc({ method: r.method, outcome: r.outcome }, r.n);
        },
      });
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
