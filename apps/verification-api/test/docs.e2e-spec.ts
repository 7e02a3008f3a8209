import {
  applicantResponse,
  levelListResponse,
  sessionResponse,
  statusResponse,
  stepsResponse,
  verificationError,
} from '@tessera/contracts';
import { OPENAPI_DOCS_CSP } from '@tessera/platform';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

const committed = JSON.parse(
  readFileSync(join(__dirname, '../../../docs/openapi/verification-api.json'), 'utf8'),
);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

describe('/docs', () => {
  it('serves the committed document at /docs/openapi.json, without credentials', async () => {
    const res = await h.http().get('/docs/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body).toEqual(committed);
  });

  it('renders the reference at /docs from local assets under a CSP without inline scripts', async () => {
    const page = await h.http().get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toBe(OPENAPI_DOCS_CSP);
    const urls = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls).toEqual(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/init.js']);
    expect(page.text).not.toMatch(/<script>/);
    for (const url of urls) await h.http().get(url!).expect(200);
    expect((await h.http().get('/docs/init.js').expect(200)).text).toContain('"/docs/openapi.json"');
  });

  it('documents every partner, SDK, operator and webhook route with its security and the webhook events', async () => {
    const res = { body: committed };
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/levels',
        '/v1/levels/{levelName}',
        '/v1/applicants',
        '/v1/applicants/{externalUserId}',
        '/v1/applicants/{externalUserId}/company-info',
        '/v1/applicants/{externalUserId}/company-structure',
        '/v1/applicants/{externalUserId}/ubos',
        '/v1/applicants/{externalUserId}/ubos/{uboIndex}',
        '/v1/applicants/{externalUserId}/ubos/{uboIndex}/spawn-kyc',
        '/v1/applicants/{externalUserId}/ubos/{uboIndex}/regenerate-link',
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
    expect(res.body.components.schemas.UboCreate.required).toEqual(
      expect.arrayContaining(['fullName', 'dateOfBirth', 'ownershipPercent', 'roles']),
    );
    expect(Object.keys(res.body.components.schemas.SpawnResult.properties)).toEqual([
      'uboIndex',
      'childApplicantId',
      'childExternalUserId',
      'alreadyLinked',
      'sdkLink',
    ]);
    expect(res.body.paths['/v1/applicants/{externalUserId}/company-structure'].patch).toBeDefined();
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/webhooks',
        '/v1/webhooks/test',
        '/v1/webhooks/events/catalog',
        '/v1/webhooks/deliveries',
        '/v1/webhooks/deliveries/{id}',
        '/v1/webhooks/deliveries/{id}/retry',
      ]),
    );
    expect(res.body.paths['/v1/levels'].get.security).toEqual([
      { apiKey: [], apiSecret: [], environment: [] },
    ]);
    expect(res.body.paths['/api/v1/sdk/session'].get.security).toEqual([{ sdkToken: [] }]);
    expect(res.body.paths['/admin/v1/products'].post.security).toEqual([{ operatorToken: [] }]);
    expect(Object.keys(res.body.webhooks)).toEqual(
      expect.arrayContaining([
        'applicantCreated',
        'applicantReviewed',
        'companyChildrenCompleted',
        'webhook.test',
      ]),
    );
    expect(res.body.components.schemas.ApplicantReviewedData.required).toEqual(
      expect.arrayContaining(['applicantId', 'reviewResult', 'steps']),
    );
  });

  it('answers that match the documented response schemas', async () => {
    const { productId, key } = await h.tenant();
    await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
    const auth = h.auth(key);
    levelListResponse.strict().parse((await h.http().get('/v1/levels').set(auth).expect(200)).body);
    const created = await h
      .http()
      .post('/v1/applicants')
      .set(auth)
      .send({ externalUserId: 'doc-1', verificationLevelName: INDIVIDUAL_LEVEL.name, firstName: 'Ada' })
      .expect(201);
    applicantResponse.strict().parse(created.body);
    statusResponse
      .strict()
      .parse((await h.http().get('/v1/applicants/doc-1/status').set(auth).expect(200)).body);
    stepsResponse
      .strict()
      .parse((await h.http().get('/v1/applicants/doc-1/steps').set(auth).expect(200)).body);
    const session = await h
      .http()
      .post(`/v1/applicants/doc-1/verification-sessions?verificationLevelName=${INDIVIDUAL_LEVEL.name}`)
      .set(auth)
      .expect(202);
    sessionResponse.strict().parse(session.body);
    const bad = await h.http().post('/v1/applicants').set(auth).send({}).expect(400);
    verificationError.strict().parse(bad.body);
  });
});
