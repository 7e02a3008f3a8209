import { Injectable } from '@nestjs/common';
import { type PreparedQuery, preparedQuery } from '@tessera/platform';
import { DataSource } from 'typeorm';

export interface ProductRow {
  id: string;
  name: string;
}

export interface ApiKeyRow {
  apiKey: string;
  productId: string;
  environment: 'production' | 'sandbox';
  secretHash: string;
  active: boolean;
}

@Injectable()
export class ProductsRepository {
  private readonly prepared: PreparedQuery;

  constructor(private readonly dataSource: DataSource) {
    this.prepared = preparedQuery(dataSource);
  }

  async createProduct(name: string): Promise<ProductRow> {
    const [row] = await this.dataSource.query<ProductRow[]>(
      'INSERT INTO products (name) VALUES ($1) RETURNING id, name',
      [name],
    );
    return row;
  }

  async productExists(id: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM products WHERE id = $1', [id]);
    return rows.length > 0;
  }

  async insertKey(key: Omit<ApiKeyRow, 'active'>): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO api_keys (api_key, product_id, environment, secret_hash) VALUES ($1, $2, $3, $4)',
      [key.apiKey, key.productId, key.environment, key.secretHash],
    );
  }

  async findKey(apiKey: string): Promise<ApiKeyRow | undefined> {
    const [row] = await this.prepared<ApiKeyRow>(
      'verification_find_key',
      `SELECT api_key AS "apiKey", product_id AS "productId", environment, secret_hash AS "secretHash", active
         FROM api_keys WHERE api_key = $1`,
      [apiKey],
    );
    return row;
  }

  /** True when the key existed (deactivating twice is fine). */
  async deactivateKey(apiKey: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `UPDATE api_keys SET active = false, deactivated_at = coalesce(deactivated_at, now())
        WHERE api_key = $1 RETURNING api_key`,
      [apiKey],
    );
    return (rows[0] as unknown[]).length > 0;
  }
}
