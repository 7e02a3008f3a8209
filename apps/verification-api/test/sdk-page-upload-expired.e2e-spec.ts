/**
 * The hosted page still holds the file when its upload expired before it was recorded (503 `upload_expired`,
 * decisions 0460, 0464, 0469): it sends the file again by itself once, and only if that also expires asks the
 * user to try again. The expiry is real: the test holds the applicant's lock, so the upload is staged in the real
 * media-store and its commit waits; the staged row is aged past MEDIA_STAGED_TTL_SECONDS and media-store's own
 * sweep removes it, then the lock is released and the commit finds it gone. The page in Debian's chromium.
 */
import { mediaFixture as fixture, untilTrue } from '@tessera/testing';
import type { Browser, Page } from 'playwright-core';
import { Client } from 'pg';
import { launchChromium, linkMaker, startPageApp } from './browser';
import type { Credential, Harness } from './harness';
import type { MediaHarness } from './media';

jest.setTimeout(120_000);

let mh: MediaHarness;
let h: Harness;
let key: Credential;
let browser: Browser;
let origin: string;

const PNG = fixture('tiny.png');

beforeAll(async () => {
  let productId: string;
  ({ mh, h, key, productId, origin } = await startPageApp({ MEDIA_STAGED_SWEEP_INTERVAL_MS: '100' }));
  await h.admin('post', `/products/${productId}/levels`, {
    name: 'SELFIE',
    applicantType: 'individual',
    steps: [{ kind: 'selfie' }],
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await mh?.close();
});

const newLink = linkMaker('expired');

const count = async (sql: string, params: unknown[] = []) =>
  Number((await h.sql<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params))[0].n);

/** Sessions of this database waiting for a lock (an upload's commit waiting for the applicant's). */
const lockWaits = () =>
  count("pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()");

/** A connection that takes the applicant's row lock, as verification-api's commit of an upload does. */
async function applicantLocker(applicantId: string) {
  const client = new Client({ connectionString: h.env.db.url });
  await client.connect();
  await client.query('BEGIN');
  return {
    /** Takes the lock; resolves once held (it waits behind whoever holds or waits for it). */
    lock: () => client.query('SELECT 1 FROM verification.applicants WHERE id = $1 FOR UPDATE', [applicantId]),
    release: () => client.query('ROLLBACK'),
    end: () => client.end(),
  };
}

/**
 * The staged upload waiting for its commit expires: once its commit waits for the lock (`waits` sessions wait),
 * its row is aged past the TTL and media-store's sweep removes its bytes and row.
 */
async function expireStagedUpload(waits: number): Promise<void> {
  await untilTrue(async () => (await count('media.staged_uploads')) === 1, 'the staged upload');
  await untilTrue(async () => (await lockWaits()) >= waits, 'the commit waiting for the lock');
  await h.sql("UPDATE media.staged_uploads SET created_at = created_at - interval '2 hours'");
  await untilTrue(async () => (await count('media.staged_uploads')) === 0, 'the sweep');
}

const START: Record<string, string> = { en: 'Start', de: 'Los geht’s' };

/** The page on a fresh link of the selfie level, on the selfie step; `answers` logs each upload's answer. */
async function selfieStep(lang: string) {
  const link = await newLink({ h, key, origin }, 'SELFIE', { lang });
  const [{ applicant_id: applicantId }] = await h.sql<{ applicant_id: string }>(
    'SELECT applicant_id FROM enrollments WHERE id = $1',
    [link.enrollmentId],
  );
  const context = await browser.newContext({ locale: `${lang}-${lang.toUpperCase()}` });
  const page = await context.newPage();
  const answers: { status: number; code: string | null; retryAfter: string | null }[] = [];
  page.on('response', (response) => {
    if (!response.url().includes('/api/v1/sdk/uploads/')) return;
    const headers = response.headers();
    answers.push({
      status: response.status(),
      code: headers['x-error-code'] ?? null,
      retryAfter: headers['retry-after'] ?? null,
    });
  });
  await page.goto(link.url);
  await page.getByRole('button', { name: START[lang] }).click();
  await page.locator('#selfie-file').waitFor({ state: 'attached' });
  return { page, context, answers, applicantId, enrollmentId: link.enrollmentId };
}

const pick = (page: Page) =>
  page.locator('#selfie-file').setInputFiles({ name: 'selfie.png', mimeType: 'image/png', buffer: PNG });

const EXPIRED = { status: 503, code: 'upload_expired', retryAfter: '0' };

describe('an upload that expired before it was recorded', () => {
  it('is sent again by the page once, by itself, and ends recorded', async () => {
    const { page, context, answers, applicantId, enrollmentId } = await selfieStep('en');
    const locker = await applicantLocker(applicantId);
    try {
      await locker.lock();
      await pick(page);
      await expireStagedUpload(1);
      await locker.release(); // the first commit finds its upload swept: 503; the page sends the file again
      await page.locator('#selfie-status', { hasText: 'Uploaded' }).waitFor();
    } finally {
      await locker.end();
    }
    expect(answers).toEqual([EXPIRED, { status: 201, code: null, retryAfter: null }]);
    expect(await count('media.resources WHERE enrollment_id = $1', [enrollmentId])).toBe(1);
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).count()).resolves.toBe(0);
    await context.close();
  });

  it.each([
    ['en', 'The upload took too long and was not saved. Please try again.'],
    [
      'de',
      'Das Hochladen hat zu lange gedauert, die Datei wurde nicht gespeichert. Bitte versuchen Sie es erneut.',
    ],
  ])(
    'that expires again tells the user to try again (%s), and nothing is recorded',
    async (lang, message) => {
      const { page, context, answers, applicantId, enrollmentId } = await selfieStep(lang);
      const first = await applicantLocker(applicantId);
      const second = await applicantLocker(applicantId);
      try {
        await first.lock();
        await pick(page);
        await expireStagedUpload(1);
        // The second locker queues behind the first commit: it holds the lock before the page sends again.
        const secondHolds = second.lock();
        await untilTrue(async () => (await lockWaits()) >= 2, 'the second locker queued');
        await first.release();
        await secondHolds;
        await expireStagedUpload(1);
        await second.release();
        await page.getByRole('alert').filter({ hasText: message }).waitFor();
      } finally {
        await first.end();
        await second.end();
      }
      expect(answers).toEqual([EXPIRED, EXPIRED]);
      expect(await count('media.resources WHERE enrollment_id = $1', [enrollmentId])).toBe(0);
      await expect(page.locator('#selfie-status', { hasText: /✓/ }).count()).resolves.toBe(0);
      await context.close();
    },
  );
});
