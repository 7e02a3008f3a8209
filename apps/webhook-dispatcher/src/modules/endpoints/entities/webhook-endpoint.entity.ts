import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** One partner endpoint per (tenant, source). The signing secret is sealed with SecretBox. */
@Entity({ name: 'webhook_endpoints' })
@Index('webhook_endpoints_tenant_source_uq', ['tenantId', 'source'], { unique: true })
export class WebhookEndpointEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('text', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  source: string;

  @Column('text')
  url: string;

  @Column('text', { name: 'secret_sealed' })
  secretSealed: string;

  /** The PUT that stored the secret (decision 0448); null when it was stored by a caller without one. */
  @Column('uuid', { name: 'secret_put_id', nullable: true })
  secretPutId: string | null;

  /**
   * The API acknowledged the reply that carried the secret. Until then a repeat PUT with the same URL rotates
   * it again: the reply may never have reached the partner (decision 0448).
   */
  @Column('boolean', { name: 'secret_acknowledged', default: true })
  secretAcknowledged: boolean;

  /** Null: every event type. */
  @Column('jsonb', { name: 'subscribed_event_types', nullable: true })
  subscribedEventTypes: string[] | null;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', name: 'updated_at' })
  updatedAt: Date;
}
