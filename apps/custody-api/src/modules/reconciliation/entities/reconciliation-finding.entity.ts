import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** One wallet whose numbers disagree in one run: amounts in base units, the cause where known. */
@Entity({ name: 'reconciliation_findings' })
@Index('reconciliation_findings_run_idx', ['runId'])
export class ReconciliationFindingEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid', { name: 'run_id' })
  runId: string;

  @Column('uuid', { name: 'wallet_id' })
  walletId: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('text', { name: 'asset_symbol' })
  assetSymbol: string;

  @Column('integer', { name: 'asset_decimals' })
  assetDecimals: number;

  /** ledger (balance row vs entries) or chain (on-chain balance vs ledger). */
  @Column('text')
  check: string;

  @Column('text')
  cause: string;

  @Column('boolean')
  explained: boolean;

  @Column('numeric', { precision: 78, scale: 0 })
  expected: string;

  @Column('numeric', { precision: 78, scale: 0 })
  actual: string;

  @Column('numeric', { precision: 78, scale: 0 })
  difference: string;

  /** Base-unit breakdown (buckets, in-flight amounts, addresses, block). */
  @Column('jsonb')
  details: Record<string, unknown>;
}
