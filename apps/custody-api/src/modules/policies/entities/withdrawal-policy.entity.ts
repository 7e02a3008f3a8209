import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A tenant's withdrawal policy for one environment (sandbox or production data), replaced as a whole by the
 * operator. `document` holds the normalised rules: asset ids and amounts in base units (decision 0220).
 */
@Entity({ name: 'withdrawal_policies' })
export class WithdrawalPolicyEntity {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('text')
  environment: string;

  /** Increases by one on every change; each recorded decision names the version it applied. */
  @Column('integer')
  version: number;

  @Column('jsonb')
  document: Record<string, unknown>;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt: Date;
}
