import {
  type DispatcherProcess,
  makeCertificate,
  startDispatcherProcess,
  SETUP_HOOK_TIMEOUT_MS,
  until,
} from '@tessera/testing';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { COMPANY_LEVEL, type Credential, type Harness, INDIVIDUAL_LEVEL, startHarness } from './harness';

/**
 * The company roll-up driven by the children's sandbox reviews, delivered by the real webhook-dispatcher to
 * an HTTPS receiver: every child terminal -> the parent leaves awaiting_user, companyChildrenCompleted once.
 */
let h: Harness;
let dispatcher: DispatcherProcess;
let receiver: Server;
let productId: string;
let sandboxKey: Credential;
const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];

beforeAll(async () => {
  const cert = makeCertificate();
  receiver = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/kyb`;
  h = await startHarness();
  dispatcher = await startDispatcherProcess({ ...h.env.env, WEBHOOK_CA_FILE: cert.certFile });
  ({ productId } = await h.tenant());
  sandboxKey = await h.admin<Credential>('post', `/products/${productId}/keys`, { environment: 'sandbox' });
  await h.admin('post', `/products/${productId}/levels`, INDIVIDUAL_LEVEL);
  await h.admin('post', `/products/${productId}/levels`, COMPANY_LEVEL);
  await h.http().put('/v1/webhooks').set(h.auth(sandboxKey)).send({ url: receiverUrl }).expect(200);
}, SETUP_HOOK_TIMEOUT_MS);

afterAll(async () => {
  await dispatcher?.stop();
  await h?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

const api = () => h.http();
const auth = () => h.auth(sandboxKey);

/** A sandbox company with two spawned UBO children. */
async function companyWithTwoChildren(externalUserId: string): Promise<string[]> {
  await api()
    .post('/v1/applicants')
    .set(auth())
    .send({ externalUserId, type: 'company', verificationLevelName: 'KYB_FULL', companyName: 'Acme' })
    .expect(201);
  const children: string[] = [];
  for (const [i, fullName] of ['Ann Owner', 'Ben Director'].entries()) {
    await api()
      .post(`/v1/applicants/${externalUserId}/ubos`)
      .set(auth())
      .send({ fullName, dateOfBirth: '1970-01-01', ownershipPercent: 50, roles: ['ubo'] })
      .expect(201);
    const spawned = await api()
      .post(`/v1/applicants/${externalUserId}/ubos/${i}/spawn-kyc`)
      .set(auth())
      .expect(201);
    children.push(spawned.body.childExternalUserId as string);
  }
  return children;
}

const review = (externalUserId: string, body: Record<string, unknown>) =>
  api().post(`/v1/applicants/${externalUserId}/sandbox/review`).set(auth()).send(body);

/** Distinct deliveries (webhook-id) of one event type about one applicant. */
const deliveries = (eventType: string, externalUserId: string) =>
  new Set(
    received
      .filter((r) => {
        const envelope = JSON.parse(r.body) as {
          type?: string;
          eventType?: string;
          data?: { externalUserId?: string };
        };
        const type = envelope.type ?? envelope.eventType;
        return type === eventType && envelope.data?.externalUserId === externalUserId;
      })
      .map((r) => r.headers['webhook-id'] as string),
  );

describe('company roll-up', () => {
  it('two children reviewed concurrently: each fires applicantReviewed, the parent fires companyChildrenCompleted once', async () => {
    const companies = ['co-a', 'co-b', 'co-c'];
    const children = await Promise.all(companies.map((c) => companyWithTwoChildren(c)));
    for (const c of companies) {
      const parent = await api().get(`/v1/applicants/${c}`).set(auth()).expect(200);
      expect(parent.body.status).toBe('awaiting_user');
    }
    // Both children of each company finish at the same moment.
    const results = await Promise.all(
      children.flatMap(([first, second]) => [
        review(first, { reviewAnswer: 'GREEN' }),
        review(second, { reviewAnswer: 'RED', reviewRejectType: 'FINAL', rejectLabels: ['FORGERY'] }),
      ]),
    );
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));

    for (const [i, c] of companies.entries()) {
      await until(
        () => deliveries('companyChildrenCompleted', c).size,
        (n) => n >= 1,
      );
      for (const child of children[i]) {
        await until(
          () => deliveries('applicantReviewed', child).size,
          (n) => n === 1,
        );
      }
      const parent = await api().get(`/v1/applicants/${c}`).set(auth()).expect(200);
      expect(parent.body.status).toBe('pending');
      const structure = await api().get(`/v1/applicants/${c}/company-structure`).set(auth()).expect(200);
      expect(structure.body).toMatchObject({
        counts: { total: 2, ubos: 2, spawned: 2, completed: 1, rejected: 1, pending: 0 },
        allChildrenComplete: true,
        lastChildCompletedAtUtc: expect.any(String),
      });
      const outbox = await h.sql(
        "SELECT 1 FROM outbox WHERE event_type = 'companyChildrenCompleted' AND entity_id = $1",
        [parent.body.id],
      );
      expect(outbox).toHaveLength(1);
    }
    // Nothing more arrives for the parents once the outbox has been drained.
    await new Promise((r) => setTimeout(r, 500));
    for (const c of companies) expect(deliveries('companyChildrenCompleted', c).size).toBe(1);
    const [delivery] = received.filter(
      (r) => r.body.includes('companyChildrenCompleted') && r.body.includes('"co-a"'),
    );
    const envelope = JSON.parse(delivery.body) as { data: Record<string, unknown> };
    expect(envelope.data).toMatchObject({ externalUserId: 'co-a', levelName: 'KYB_FULL', sandbox: true });
  });

  it('removing the row of the last open child closes the parent: companyChildrenCompleted, status pending', async () => {
    const [first] = await companyWithTwoChildren('co-removed');
    await review(first, { reviewAnswer: 'GREEN' }).expect(200);
    const open = await api().get('/v1/applicants/co-removed').set(auth()).expect(200);
    expect(open.body.status).toBe('awaiting_user');
    // The second owner turns out not to be one: the partner removes the row; its child leaves the roll-up.
    await api().delete('/v1/applicants/co-removed/ubos/1').set(auth()).expect(200);
    const parent = await api().get('/v1/applicants/co-removed').set(auth()).expect(200);
    expect(parent.body.status).toBe('pending');
    const structure = await api().get('/v1/applicants/co-removed/company-structure').set(auth()).expect(200);
    expect(structure.body.allChildrenComplete).toBe(true);
    await until(
      () => deliveries('companyChildrenCompleted', 'co-removed').size,
      (n) => n === 1,
    );
    // Removing the finished child's row afterwards changes nothing and sends nothing again.
    await api().delete('/v1/applicants/co-removed/ubos/0').set(auth()).expect(200);
    const outbox = await h.sql(
      "SELECT 1 FROM outbox WHERE event_type = 'companyChildrenCompleted' AND entity_id = $1",
      [parent.body.id],
    );
    expect(outbox).toHaveLength(1);
  });

  it('a child reset and reviewed again does not fire companyChildrenCompleted a second time', async () => {
    const [first, second] = await companyWithTwoChildren('co-again');
    await review(first, { reviewAnswer: 'GREEN' }).expect(200);
    const open = await api().get('/v1/applicants/co-again/company-structure').set(auth()).expect(200);
    expect(open.body).toMatchObject({ allChildrenComplete: false, counts: { completed: 1, pending: 1 } });
    await review(second, { reviewAnswer: 'GREEN' }).expect(200);
    await h.admin('post', `/products/${productId}/applicants/${second}/reset`, {});
    await review(second, { reviewAnswer: 'GREEN' }).expect(200);
    const parent = await api().get('/v1/applicants/co-again').set(auth()).expect(200);
    const outbox = await h.sql(
      "SELECT 1 FROM outbox WHERE event_type = 'companyChildrenCompleted' AND entity_id = $1",
      [parent.body.id],
    );
    expect(outbox).toHaveLength(1);
  });
});
