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

  /** True when a key that was active is now revoked. */
  async revokeKey(apiKey: string): Promise<boolean> {
    const result = await this.db
      .getRepository(ApiKeyEntity)
      .update({ apiKey, revokedAt: null as never }, { revokedAt: new Date() });
    if (result.affected) return true;
    return (await this.findKey(apiKey)) !== null;
  }
}
