import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { PlatformOptions } from '@tessera/platform';
import {
  bootApp,
  createTestEnvironment,
  migratorFor,
  TEST_ADMIN_TOKEN,
  type TestEnvironment,
} from '@tessera/testing';
import { Client } from 'pg';
import request from 'supertest';
import { AppModule } from '../src/app.module';
import { loadEnv, trustProxy } from '../src/config/env';
import { databaseOptions } from '../src/database/database';

export const migrator = migratorFor(databaseOptions, join(__dirname, '../src/database/migrations'));

export interface Credential {
  apiKey: string;
  apiSecret: string;
  environment: 'production' | 'sandbox';
}

export interface Harness {
  env: TestEnvironment;
  app: NestFastifyApplication;
  http: () => ReturnType<typeof request>;
  admin: <T = Record<string, unknown>>(method: 'post' | 'patch', path: string, body?: unknown) => Promise<T>;
  /** A product with one production key. */
  tenant: (name?: string) => Promise<{ productId: string; key: Credential }>;
  auth: (key: Credential) => Record<string, string>;
  /** Reads the service's own tables (schema verification on the search path). */
  sql: <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;
  close: () => Promise<void>;
}

export async function startHarness(
  extraEnv: Record<string, string> = {},
  overrides: Partial<PlatformOptions> = {},
): Promise<Harness> {
  const env = await createTestEnvironment([migrator]);
  const config = loadEnv({ ...env.env, ...extraEnv });
  const app = await bootApp(AppModule.forRoot(config, overrides), {
    rpc: false,
    trustProxy: trustProxy(config),
  });
  const http = () => request(app.getHttpServer());
  const admin = async <T>(method: 'post' | 'patch', path: string, body?: unknown): Promise<T> => {
    const agent = http();
    const res = await agent[method](`/admin/v1${path}`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send(body as object);
    if (res.status >= 300) throw new Error(`${method} ${path} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as T;
  };
  const tenant = async (name = 'Acme') => {
    const product = await admin<{ id: string }>('post', '/products', { name });
    const key = await admin<Credential>('post', `/products/${product.id}/keys`, {
      environment: 'production',
    });
    return { productId: product.id, key };
  };
  const auth = (key: Credential) => ({
    'x-api-key': key.apiKey,
    'x-api-secret': key.apiSecret,
    'x-environment': key.environment,
  });
  const client = new Client({ connectionString: env.db.url, options: '-c search_path=verification' });
  await client.connect();
  const sql = async <T>(text: string, params: unknown[] = []) =>
    (await client.query(text, params)).rows as T[];
  return {
    env,
    sql,
    app,
    http,
    admin,
    tenant,
    auth,
    close: async () => {
      await client.end();
      await app.close();
      await env.teardown();
    },
  };
}

/**
 * An applicant created with `body` (at least its externalUserId) and a link to its current level, resolved as the
 * hosted page does: the link's short code and the SDK token it gives.
 */
export async function applicantWithToken(
  h: Harness,
  key: Credential,
  body: { externalUserId: string } & Record<string, unknown>,
): Promise<{ shortCode: string; token: string }> {
  await h.http().post('/v1/applicants').set(h.auth(key)).send(body).expect(201);
  const path = `/v1/applicants/${encodeURIComponent(body.externalUserId)}/verifications`;
  const { shortCode } = (await h.http().post(path).set(h.auth(key)).expect(202)).body as {
    shortCode: string;
  };
  const { token } = (await h.http().get(`/api/v1/sdk/links/${shortCode}`).expect(200)).body as {
    token: string;
  };
  return { shortCode, token };
}

export const INDIVIDUAL_LEVEL = {
  name: 'BASIC_KYC',
  applicantType: 'individual',
  isDefault: true,
  steps: [
    { kind: 'personal_information' },
    { kind: 'identity_doc' },
    { kind: 'selfie' },
    { kind: 'aml', optional: true },
  ],
};

export const COMPANY_LEVEL = {
  name: 'KYB_FULL',
  applicantType: 'company',
  steps: [{ kind: 'company_data' }, { kind: 'company_documents' }],
  companyDataFields: [
    'companyName',
    'registrationNumber',
    'legalForm',
    'incorporatedOn',
    'legalAddress',
    'registrationCountry',
    'email',
    'phone',
  ],
};
