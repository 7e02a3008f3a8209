import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** A credential of a product. Only a keyed hash of the secret is stored. */
@Entity({ name: 'api_keys' })
@Check('api_keys_environment_check', `"environment" IN ('production', 'sandbox')`)
@Index('api_keys_product_idx', ['productId'])
export class ApiKeyEntity {
  @PrimaryColumn('text', { name: 'api_key' })
  apiKey: string;

  @Column('uuid', { name: 'product_id' })
  productId: string;

  @Column('text')
  environment: 'production' | 'sandbox';

  /** HMAC-SHA256 of the secret with a pepper derived from SECRETS_MASTER_KEY, hex. */
  @Column('text', { name: 'secret_hash' })
  secretHash: string;

  @Column('boolean', { default: true })
  active: boolean;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'deactivated_at', nullable: true })
  deactivatedAt: Date | null;
}
