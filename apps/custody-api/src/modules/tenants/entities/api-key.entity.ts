import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** An API key: `ck_test_<id>` (sandbox data) or `ck_live_<id>` (production data). */
@Entity({ name: 'api_keys' })
@Index('api_keys_tenant_idx', ['tenantId'])
export class ApiKeyEntity {
  /** The full key as sent in X-API-Key. */
  @PrimaryColumn('text', { name: 'api_key' })
  apiKey: string;

  @Column('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('text')
  environment: 'test' | 'live';

  @Column('text', { array: true })
  scopes: string[];

  @Column('text', { name: 'ip_allow_list', array: true, default: () => "'{}'" })
  ipAllowList: string[];

  /** The HMAC secret sealed with SecretBox (purpose `custody-api-key`, associated data = apiKey). */
  @Column('text', { name: 'secret_sealed' })
  secretSealed: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt: Date | null;
}
