import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** One reconciliation of the ledger against itself and the chain (decision 0226); its findings hang off it. */
@Entity({ name: 'reconciliation_runs' })
@Index('reconciliation_runs_started_idx', ['startedAt'])
export class ReconciliationRunEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** scheduled (worker), operator (POST /admin/reconciliations) or cli. */
  @Column('text')
  trigger: string;

  /** Null: every tenant. */
  @Column('uuid', { name: 'tenant_id', nullable: true })
  tenantId: string | null;

  /** completed, or partial when the chain could not be read. */
  @Column('text')
  status: string;

  @Column('integer', { name: 'wallets_checked' })
  walletsChecked: number;

  @Column('integer', { name: 'chain_wallets_checked' })
  chainWalletsChecked: number;

  @Column('integer')
  differences: number;

  @Column('integer')
  explained: number;

  @Column('text', { nullable: true })
  error: string | null;

  @Column('timestamptz', { name: 'started_at' })
  startedAt: Date;

  @Column('timestamptz', { name: 'finished_at' })
  finishedAt: Date;
}
