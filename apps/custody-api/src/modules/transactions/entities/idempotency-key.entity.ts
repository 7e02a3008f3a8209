import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * Idempotency-Key reservations, keyed by (tenant, environment, endpoint, key). The row is inserted in
 * the same database transaction that creates the transaction, so concurrent requests with one key wait
 * on the primary key and then read the committed response. Rows older than 24 h are reusable.
 */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKeyEntity {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('text')
  environment: string;

  @PrimaryColumn('text')
  endpoint: string;

  @PrimaryColumn('text')
  key: string;

  @Column('text', { name: 'request_hash' })
  requestHash: string;

  @Column('integer', { name: 'status_code' })
  statusCode: number;

  @Column('jsonb')
  response: Record<string, unknown>;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;
}
