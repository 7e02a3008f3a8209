import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiKeyEntity } from './entities/api-key.entity';
import { TenantEntity } from './entities/tenant.entity';

@Injectable()
export class TenantsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async createTenant(name: string, sealSeed: (tenantId: string) => string): Promise<TenantEntity> {
    return this.db.transaction(async (manager) => {
      const tenant = await manager.save(TenantEntity, manager.create(TenantEntity, { name }));
      tenant.hdSeedSealed = sealSeed(tenant.id);
      await manager.update(TenantEntity, { id: tenant.id }, { hdSeedSealed: tenant.hdSeedSealed });
      return tenant;
    });
  }

  findTenant(id: string): Promise<TenantEntity | null> {
    return this.db.getRepository(TenantEntity).findOneBy({ id });
  }

  async insertKey(key: Omit<ApiKeyEntity, 'createdAt' | 'revokedAt'>): Promise<void> {
    await this.db.getRepository(ApiKeyEntity).insert(key);
  }

  findKey(apiKey: string): Promise<ApiKeyEntity | null> {
    return this.db.getRepository(ApiKeyEntity).findOneBy({ apiKey });
  }

  /** Revokes a key (idempotent); false when no such key exists. */
  async revokeKey(apiKey: string): Promise<boolean> {
    await this.db.query(
      `UPDATE "api_keys" SET "revoked_at" = now() WHERE "api_key" = $1 AND "revoked_at" IS NULL`,
      [apiKey],
    );
    return (await this.findKey(apiKey)) !== null;
  }
}
