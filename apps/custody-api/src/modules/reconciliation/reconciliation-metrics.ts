import { Injectable } from '@nestjs/common';
import { MetricsService } from '@tessera/platform';
import { Counter, Gauge } from 'prom-client';

/** Prometheus series of reconciliation (docs/custody-api.md, "Reconciliation"), on each role's /metrics. */
@Injectable()
export class ReconciliationMetrics {
  readonly runs: Counter<'trigger' | 'status'>;
  readonly findings: Counter<'check' | 'cause' | 'explained'>;
  readonly unexplained: Gauge;
  readonly lastRun: Gauge;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.runs = new Counter({
      name: 'custody_reconciliation_runs_total',
      help: 'Reconciliation runs by trigger (scheduled, operator, cli) and status (completed, partial)',
      labelNames: ['trigger', 'status'],
      registers,
    });
    this.findings = new Counter({
      name: 'custody_reconciliation_findings_total',
      help: 'Wallets whose numbers disagreed in a run, by check, cause and whether in-flight transactions explain it',
      labelNames: ['check', 'cause', 'explained'],
      registers,
    });
    this.unexplained = new Gauge({
      name: 'custody_reconciliation_differences',
      help: 'Unexplained differences found by the latest run of this process (alert when > 0)',
      registers,
    });
    this.lastRun = new Gauge({
      name: 'custody_reconciliation_last_run_timestamp_seconds',
      help: 'When the latest run of this process finished (Unix seconds)',
      registers,
    });
  }
}
