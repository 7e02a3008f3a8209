import { TEST_ADMIN_TOKEN } from '@tessera/testing';
import { COMPANY_LEVEL, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const bearer = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe('operator API: products and keys', () => {
  it('creates a product: 201 {id, name}', async () => {
    const res = await h.http().post('/admin/v1/products').set(bearer).send({ name: 'Acme' }).expect(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Acme' });
  });

  it('issues production and sandbox keys with the secret shown once, stored only as a keyed hash', async () => {
    const product = await h.admin<{ id: string }>('post', '/products', { name: 'Keys' });
    const live = await h
      .http()
      .post(`/admin/v1/products/${product.id}/keys`)
      .set(bearer)
      .send({ environment: 'production' })
      .expect(201);
    expect(live.body).toEqual({
      apiKey: expect.stringMatching(/^vk_live_/),
      apiSecret: expect.any(String),
      environment: 'production',
    });
    expect(Buffer.from(live.body.apiSecret, 'base64url')).toHaveLength(32);
    const test = await h
      .http()
      .post(`/admin/v1/products/${product.id}/keys`)
      .set(bearer)
      .send({ environment: 'sandbox' })
      .expect(201);
    expect(test.body.apiKey).toMatch(/^vk_test_/);
    const [row] = await h.sql<{ secret_hash: string }>(
      'SELECT secret_hash FROM api_keys WHERE api_key = $1',
      [live.body.apiKey],
    );
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.secret_hash).not.toContain(live.body.apiSecret);
  });

  it('refuses a bad environment (400) and an unknown product (404)', async () => {
    const product = await h.admin<{ id: string }>('post', '/products', { name: 'X' });
    const bad = await h
      .http()
      .post(`/admin/v1/products/${product.id}/keys`)
      .set(bearer)
      .send({ environment: 'staging' })
      .expect(400);
    expect(bad.body).toEqual({ message: 'environment: environment must be production or sandbox' });
    const missing = await h
      .http()
      .post('/admin/v1/products/00000000-0000-4000-8000-000000000000/keys')
      .set(bearer)
      .send({ environment: 'sandbox' })
      .expect(404);
    expect(missing.body).toEqual({ message: 'Product not found' });
  });

  it('deactivates a key: 200, then the key gets 401', async () => {
    const { key } = await h.tenant();
    await h.http().get('/v1/levels').set(h.auth(key)).expect(200);
    await h.http().post(`/admin/v1/keys/${key.apiKey}/deactivate`).set(bearer).expect(200);
    const res = await h.http().get('/v1/levels').set(h.auth(key)).expect(401);
    expect(res.body).toEqual({ message: 'Invalid credentials' });
    await h.http().post('/admin/v1/keys/vk_live_nope/deactivate').set(bearer).expect(404);
  });

  it('refuses a wrong or missing operator token with 401 {message}', async () => {
    const res = await h
      .http()
      .post('/admin/v1/products')
      .set({ authorization: 'Bearer wrong-token-xxxxxxxx' })
      .send({ name: 'A' })
      .expect(401);
    expect(res.body).toEqual({ message: 'Invalid operator token' });
    await h.http().post('/admin/v1/products').send({ name: 'A' }).expect(401);
  });
});

describe('operator API: levels', () => {
  it('creates a level and answers the level detail with defaults', async () => {
    const product = await h.admin<{ id: string }>('post', '/products', { name: 'Levels' });
    const res = await h
      .http()
      .post(`/admin/v1/products/${product.id}/levels`)
      .set(bearer)
      .send(INDIVIDUAL_LEVEL)
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'BASIC_KYC',
      applicantType: 'individual',
      isActive: true,
      isDefault: true,
      steps: [
        { kind: 'personal_information', optional: false, config: {} },
        { kind: 'identity_doc', optional: false, config: {} },
        { kind: 'selfie', optional: false, config: {} },
        { kind: 'aml', optional: true, config: {} },
      ],
      attachedQuestionnaireId: null,
      personalInfoFields: [],
      personalInfoRequiredFields: [],
      companyDataFields: [],
      companyRequiredFields: [],
      companyRequiredDocuments: [],
      companyDocumentsMinRequired: null,
      companyLegalForms: [],
    });
  });

  it.each(['basic', 'B', '1ABC', 'A-B', `A${'B'.repeat(41)}`])(
    'refuses the level name %s with 400',
    async (name) => {
      const product = await h.admin<{ id: string }>('post', '/products', { name: 'P' });
      const res = await h
        .http()
        .post(`/admin/v1/products/${product.id}/levels`)
        .set(bearer)
        .send({ ...INDIVIDUAL_LEVEL, name })
        .expect(400);
      expect(res.body).toEqual({ message: 'name: must match ^[A-Z][A-Z0-9_]{1,40}$' });
    },
  );

  it('refuses a duplicate name with 409', async () => {
    const product = await h.admin<{ id: string }>('post', '/products', { name: 'P' });
    await h.admin('post', `/products/${product.id}/levels`, INDIVIDUAL_LEVEL);
    const res = await h
      .http()
      .post(`/admin/v1/products/${product.id}/levels`)
      .set(bearer)
      .send(INDIVIDUAL_LEVEL)
      .expect(409);
    expect(res.body).toEqual({ message: 'Level BASIC_KYC already exists' });
    // The refused create changed nothing: the existing level is still the product's default.
    const defaults = await h.sql<{ name: string }>(
      'SELECT name FROM levels WHERE product_id = $1 AND is_default',
      [product.id],
    );
    expect(defaults).toEqual([{ name: 'BASIC_KYC' }]);
  });

  it("a default moved to another type takes that type's flag (was a 500 on the unique index)", async () => {
    const product = await h.admin<{ id: string }>('post', '/products', { name: 'P' });
    await h.admin('post', `/products/${product.id}/levels`, INDIVIDUAL_LEVEL);
    await h.admin('post', `/products/${product.id}/levels`, { ...COMPANY_LEVEL, isDefault: true });
    const res = await h
      .http()
      .patch(`/admin/v1/products/${product.id}/levels/BASIC_KYC`)
      .set(bearer)
      .send({ applicantType: 'company' })
      .expect(200);
    expect(res.body).toMatchObject({ name: 'BASIC_KYC', applicantType: 'company', isDefault: true });
    const defaults = await h.sql<{ name: string; applicant_type: string }>(
      'SELECT name, applicant_type FROM levels WHERE product_id = $1 AND is_default',
      [product.id],
    );
    expect(defaults).toEqual([{ name: 'BASIC_KYC', applicant_type: 'company' }]);
  });

  it('concurrent default creates of one type: never a false "already exists", exactly one default after', async () => {
    for (let round = 0; round < 5; round += 1) {
      const product = await h.admin<{ id: string }>('post', '/products', { name: 'P' });
      const results = await Promise.all(
        ['ONE', 'TWO', 'THREE'].map((name) =>
          h
            .http()
            .post(`/admin/v1/products/${product.id}/levels`)
            .set(bearer)
            .send({ ...INDIVIDUAL_LEVEL, name }),
        ),
      );
      for (const res of results) {
        expect([201, 409]).toContain(res.status);
        if (res.status === 409) expect(res.body.message).not.toMatch(/already exists/);
      }
      const defaults = await h.sql('SELECT name FROM levels WHERE product_id = $1 AND is_default', [
        product.id,
      ]);
      expect(defaults).toHaveLength(1);
    }
  });

  it('a step config nested past the limit is 400 {message}, not a 500', async () => {
    const product = await h.admin<{ id: string }>('post', '/products', { name: 'P' });
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const body = `{"name":"DEEP","applicantType":"individual","steps":[{"kind":"aml","config":{"x":${deep}}}]}`;
    const res = await h
      .http()
      .post(`/admin/v1/products/${product.id}/levels`)
      .set(bearer)
      .set('content-type', 'application/json')
      .send(body)
      .expect(400);
    expect(res.body).toEqual({ message: 'steps[0].config: must nest at most 16 levels deep' });
  });

  it('a new default takes the flag from the previous default of the same type', async () => {
    const product = await h.admin<{ id: string }>('post', '/products', { name: 'P' });
    await h.admin('post', `/products/${product.id}/levels`, INDIVIDUAL_LEVEL);
    await h.admin('post', `/products/${product.id}/levels`, { ...INDIVIDUAL_LEVEL, name: 'SECOND' });
    const rows = await h.sql<{ name: string }>(
      'SELECT name FROM levels WHERE product_id = $1 AND is_default',
      [product.id],
    );
    expect(rows.map((r) => r.name)).toEqual(['SECOND']);
  });

  it('PATCH updates a level and renames it while unreferenced; 409 on a rename once an applicant references it', async () => {
    const { productId, key } = await h.tenant();
    await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
    const patched = await h
      .http()
      .patch(`/admin/v1/products/${productId}/levels/BASIC_KYC`)
      .set(bearer)
      .send({ name: 'KYC_V2', isActive: false })
      .expect(200);
    expect(patched.body).toMatchObject({ name: 'KYC_V2', isActive: false });
    await h
      .http()
      .patch(`/admin/v1/products/${productId}/levels/KYC_V2`)
      .set(bearer)
      .send({ isActive: true })
      .expect(200);
    await h
      .http()
      .post('/v1/applicants')
      .set(h.auth(key))
      .send({ externalUserId: 'u1', verificationLevelName: 'KYC_V2' })
      .expect(201);
    const refused = await h
      .http()
      .patch(`/admin/v1/products/${productId}/levels/KYC_V2`)
      .set(bearer)
      .send({ name: 'KYC_V3' })
      .expect(409);
    expect(refused.body).toEqual({ message: 'Level is referenced by an applicant and cannot be renamed' });
    // Other edits of a referenced level still go through.
    await h
      .http()
      .patch(`/admin/v1/products/${productId}/levels/KYC_V2`)
      .set(bearer)
      .send({ isDefault: false })
      .expect(200);
    await h
      .http()
      .patch(`/admin/v1/products/${productId}/levels/NOPE`)
      .set(bearer)
      .send({ isActive: true })
      .expect(404);
  });
});

describe('operator API off', () => {
  it('answers 404 everywhere when ADMIN_TOKEN is unset', async () => {
    const off = await import('./harness').then((m) => m.startHarness({ ADMIN_TOKEN: '' }));
    try {
      const res = await off.http().post('/admin/v1/products').set(bearer).send({ name: 'A' }).expect(404);
      expect(res.body).toEqual({ message: 'Route not found' });
    } finally {
      await off.close();
    }
  });
});
