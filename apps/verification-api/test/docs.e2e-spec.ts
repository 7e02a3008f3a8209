import { type Harness, startHarness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

describe('/docs', () => {
  it('serves an OpenAPI 3.1 document of every partner and operator route, without credentials', async () => {
    const res = await h.http().get('/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/levels',
        '/v1/levels/{levelName}',
        '/v1/applicants',
        '/v1/applicants/{externalUserId}',
        '/v1/applicants/{externalUserId}/company-info',
        '/v1/applicants/{externalUserId}/company-structure',
        '/v1/applicants/{externalUserId}/verification-sessions',
        '/v1/applicants/{externalUserId}/verifications',
        '/v1/applicants/{externalUserId}/status',
        '/v1/applicants/{externalUserId}/steps',
        '/v1/applicants/{externalUserId}/review-history',
        '/v1/applicants/{externalUserId}/resources',
        '/v1/applicants/{externalUserId}/resources/{resourceId}',
        '/v1/applicants/{externalUserId}/uploads/history',
        '/api/v1/sdk/uploads/{slot}',
        '/admin/v1/products',
        '/admin/v1/products/{productId}/keys',
        '/admin/v1/keys/{apiKey}/deactivate',
        '/admin/v1/products/{productId}/levels',
        '/admin/v1/products/{productId}/levels/{levelName}',
        '/admin/v1/products/{productId}/applicants/{externalUserId}/steps/{kind}/review',
      ]),
    );
    expect(res.body.components.schemas.ApplicantCreate.required).toEqual(['externalUserId']);
    expect(res.body.components.schemas.StepReview.required).toEqual(['reviewAnswer']);
    await h.http().get('/docs/openapi.json').expect(200);
  });
});
