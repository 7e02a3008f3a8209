import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  type ReconciliationCause,
  type ReconciliationFinding,
  type ReconciliationRun,
  type ReconciliationRunPage,
  type ReconciliationRunSummary,
  reconciliationListQuery,
  reconciliationRequest,
} from '@tessera/contracts';
import { notFound, ROOT_LOGGER } from '@tessera/platform';
import { formatAmount } from '../../common/amounts';
import { decodeCursor, encodeCursor } from '../../common/cursor';
import { parse } from '../../common/validation';
import { ChainRouter } from '../chain/chain-router';
import { ReconciliationFindingEntity } from './entities/reconciliation-finding.entity';
import { ReconciliationRunEntity } from './entities/reconciliation-run.entity';
import { ReconciliationMetrics } from './reconciliation-metrics';
import {
  type Buckets,
  type ChainWallet,
  type LedgerMismatch,
  ReconciliationRepository,
} from './reconciliation.repository';

export type ReconciliationTrigger = 'scheduled' | 'operator' | 'cli';

/** The part of the app's pino logger used here (ROOT_LOGGER: this app's own, also with several apps in a process). */
interface AlertLogger {
  child(bindings: Record<string, unknown>): AlertLogger;
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** The stable message of the alert log line (one per unexplained difference). */
export const DIFFERENCE_ALERT = 'custody reconciliation difference';

const BUCKETS: (keyof Buckets)[] = ['total', 'available', 'pending', 'locked'];

type NewFinding = Omit<ReconciliationFindingEntity, 'id' | 'runId'>;

/** A balance row that is not the sum of its entries: the first differing bucket leads, all four are kept. */
export function ledgerFinding(m: LedgerMismatch): NewFinding {
  const bucket = BUCKETS.find((b) => m.balance[b] !== m.entries[b]) ?? 'total';
  const expected = BigInt(m.entries[bucket]);
  const actual = BigInt(m.balance[bucket]);
  return {
    walletId: m.walletId,
    tenantId: m.tenantId,
    assetSymbol: m.assetSymbol,
    assetDecimals: m.assetDecimals,
    check: 'ledger',
    cause: 'ledger_balance_mismatch',
    explained: false,
    expected: String(expected),
    actual: String(actual),
    difference: String(actual - expected),
    details: { bucket, balance: m.balance, sumOfEntries: m.entries },
  };
}

/**
 * On-chain balance against what the wallet's addresses should hold (decision 0226): the ledger's settled total
 * less the net of its internal transfers, which move balances between wallets without moving anything on the
 * chain (decision 0444). What is still moving explains part of the gap: deposits mined but not yet credited add
 * to the chain, broadcast withdrawals (and their fees) take from it once mined. Whatever is left is a
 * difference with the likeliest cause.
 */
export function chainFinding(w: ChainWallet, onChain: bigint, block: bigint): NewFinding | undefined {
  const internalNet = BigInt(w.internalNet);
  const total = BigInt(w.total) - internalNet;
  const difference = onChain - total;
  if (difference === 0n) return undefined;
  const unconfirmedIn = BigInt(w.unconfirmedIn);
  const inFlightOut = BigInt(w.inFlightOut) + BigInt(w.inFlightFees);
  const residual = difference - unconfirmedIn;
  let cause: ReconciliationCause;
  let explained = true;
  if (residual === 0n) cause = 'unconfirmed_deposit';
  else if (residual < 0n && -residual <= inFlightOut) cause = 'in_flight_withdrawal';
  else {
    explained = false;
    if (residual > 0n) cause = 'missing_credit';
    else cause = w.feePayingSends > 0 ? 'fee_drift' : 'unexplained_shortfall';
  }
  return {
    walletId: w.walletId,
    tenantId: w.tenantId,
    assetSymbol: w.assetSymbol,
    assetDecimals: w.assetDecimals,
    check: 'chain',
    cause,
    explained,
    expected: String(total),
    actual: String(onChain),
    difference: String(difference),
    details: {
      block: String(block),
      addresses: w.addresses,
      ledgerTotal: w.total,
      internalTransfersNet: w.internalNet,
      unconfirmedDeposits: String(unconfirmedIn),
      inFlightWithdrawals: w.inFlightOut,
      inFlightFeesHeld: w.inFlightFees,
      unexplained: explained ? '0' : String(residual),
    },
  };
}

/**
 * Reconciliation (issue 17, decision 0226): per wallet, the balance row against the sum of its ledger entries,
 * and for live wallets on the EVM chain the on-chain balance of their addresses against the ledger less what is
 * in flight. Each run and its findings are stored; an unexplained difference raises a metric and an alert line.
 */
@Injectable()
export class ReconciliationService {
  private readonly logger: AlertLogger;

  constructor(
    private readonly repository: ReconciliationRepository,
    private readonly chains: ChainRouter,
    private readonly metrics: ReconciliationMetrics,
    @Inject(ROOT_LOGGER) logger: AlertLogger,
  ) {
    this.logger = logger.child({ context: ReconciliationService.name });
  }

  /** Operator API and CLI: parses the body (`{tenantId?}`), runs now and returns the full report. */
  start(body: unknown, trigger: ReconciliationTrigger): Promise<ReconciliationRun> {
    const request = parse(reconciliationRequest, body);
    return this.run(trigger, request.tenantId ?? null);
  }

  async run(trigger: ReconciliationTrigger, tenantId: string | null): Promise<ReconciliationRun> {
    const id = randomUUID();
    const startedAt = new Date();
    const found: NewFinding[] = [];
    let status: 'completed' | 'partial' = 'completed';
    let error: string | null = null;
    let chainWalletsChecked = 0;

    const walletsChecked = await this.repository.walletCount(tenantId);
    for (const m of await this.repository.ledgerMismatches(tenantId)) found.push(ledgerFinding(m));

    const evm = this.chains.evm;
    if (evm) {
      try {
        const { rpc, settings } = evm;
        // The head first: deposits the scanner saw after it are not counted as on chain.
        const block = await rpc.head();
        const symbols = settings.usdtContract ? ['ETH', 'USDT'] : ['ETH'];
        for (const w of await this.repository.chainWallets(tenantId, symbols, block)) {
          const balances = await Promise.all(
            w.addresses.map((a) =>
              w.assetSymbol === 'USDT'
                ? rpc.tokenBalance(settings.usdtContract!, a, block)
                : rpc.nativeBalance(a, block),
            ),
          );
          const finding = chainFinding(
            w,
            balances.reduce((s, b) => s + b, 0n),
            block,
          );
          if (finding) found.push(finding);
          chainWalletsChecked++;
        }
      } catch (err) {
        status = 'partial';
        error = `The chain could not be read: ${(err as Error).message.split('\n')[0]}`;
        this.logger.error({ runId: id, err: error }, 'custody reconciliation could not read the chain');
      }
    } else if ((await this.repository.liveEvmWalletCount(tenantId)) > 0) {
      // Live ETH/USDT wallets exist but this process has no node: say so rather than report them clean.
      status = 'partial';
      error = 'CHAIN_EVM_RPC_URL is not set in this process: on-chain balances were not read';
    }

    const findings = found.map((f) =>
      Object.assign(new ReconciliationFindingEntity(), f, { id: randomUUID(), runId: id }),
    );
    const differences = findings.filter((f) => !f.explained).length;
    const run = Object.assign(new ReconciliationRunEntity(), {
      id,
      trigger,
      tenantId,
      status,
      walletsChecked,
      chainWalletsChecked,
      differences,
      explained: findings.length - differences,
      error,
      startedAt,
      finishedAt: new Date(),
    });
    await this.repository.saveRun(run, findings);
    this.report(run, findings);
    return this.toRun(run, findings);
  }

  /** Metrics for every run; an alert line for every unexplained difference; a summary line. */
  private report(run: ReconciliationRunEntity, findings: ReconciliationFindingEntity[]): void {
    this.metrics.runs.inc({ trigger: run.trigger, status: run.status });
    this.metrics.unexplained.set(run.differences);
    this.metrics.lastRun.set(run.finishedAt.getTime() / 1000);
    for (const f of findings) {
      this.metrics.findings.inc({ check: f.check, cause: f.cause, explained: String(f.explained) });
      if (f.explained) continue;
      this.logger.error(
        {
          alert: 'custody.reconciliation.difference',
          runId: run.id,
          walletId: f.walletId,
          tenantId: f.tenantId,
          assetSymbol: f.assetSymbol,
          check: f.check,
          cause: f.cause,
          expected: f.expected,
          actual: f.actual,
          difference: f.difference,
        },
        DIFFERENCE_ALERT,
      );
    }
    const summary = {
      runId: run.id,
      trigger: run.trigger,
      status: run.status,
      walletsChecked: run.walletsChecked,
      chainWalletsChecked: run.chainWalletsChecked,
      differences: run.differences,
      explained: run.explained,
    };
    if (run.differences > 0 || run.status !== 'completed')
      this.logger.warn(summary, 'custody reconciliation found differences');
    else this.logger.info(summary, 'custody reconciliation clean');
  }

  async get(id: string): Promise<ReconciliationRun> {
    const run = await this.repository.findRun(id);
    if (!run) throw notFound('Reconciliation not found');
    return this.toRun(run, await this.repository.findings(id));
  }

  async list(query: unknown): Promise<ReconciliationRunPage> {
    const { take, cursor } = parse(reconciliationListQuery, query);
    const runs = await this.repository.listRuns(take + 1, cursor ? decodeCursor(cursor) : undefined);
    const page = runs.slice(0, take);
    const last = page[page.length - 1];
    return {
      items: page.map((r) => this.summary(r)),
      nextCursor: runs.length > take && last ? encodeCursor(last.startedAt, last.id) : null,
    };
  }

  private summary(r: ReconciliationRunEntity): ReconciliationRunSummary {
    return {
      id: r.id,
      trigger: r.trigger as ReconciliationRunSummary['trigger'],
      tenantId: r.tenantId,
      status: r.status as ReconciliationRunSummary['status'],
      walletsChecked: r.walletsChecked,
      chainWalletsChecked: r.chainWalletsChecked,
      differences: r.differences,
      explained: r.explained,
      error: r.error,
      startedAt: r.startedAt.toISOString(),
      finishedAt: r.finishedAt.toISOString(),
    };
  }

  private toRun(r: ReconciliationRunEntity, findings: ReconciliationFindingEntity[]): ReconciliationRun {
    return {
      ...this.summary(r),
      findings: findings.map((f): ReconciliationFinding => ({
        id: f.id,
        walletId: f.walletId,
        tenantId: f.tenantId,
        assetSymbol: f.assetSymbol,
        check: f.check as ReconciliationFinding['check'],
        cause: f.cause as ReconciliationCause,
        explained: f.explained,
        expected: formatAmount(f.expected, f.assetDecimals),
        actual: formatAmount(f.actual, f.assetDecimals),
        difference: formatAmount(f.difference, f.assetDecimals),
        details: f.details,
      })),
    };
  }
}
